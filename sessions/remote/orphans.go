package remote

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"ccm/internal/objstore"
	"ccm/sessions/archive"
)

// OrphanAge is how long an archive object no manifest names is left
// alone before RemoveOrphans takes it: an upload in progress writes its
// manifest seconds after its archive, never a day.
const OrphanAge = 24 * time.Hour

// Orphans are this machine's archive objects that no manifest names and
// none will: what an upload stopped before its manifest left, or an
// archive superseded by a newer one of its session whose removal was
// stopped. Only objects written before before count. A session whose
// manifest cannot be read (damaged, of a newer ccm, describing another
// session) or names none of its archive objects keeps them all, and so
// does one with a manifest and a single archive object: nothing is taken
// on a guess. The manifests read are those of sessions
// with two archive objects or more, so a listing costs one request per
// thousand objects in the common case.
func (t *Target) Orphans(ctx context.Context, before time.Time) ([]objstore.Info, error) {
	prefix := t.Loc.Key(t.Machine) + "/"
	type session struct {
		folder, id string
		manifest   bool
		archives   []objstore.Info
	}
	byID := map[string]*session{}
	err := t.Client.List(ctx, t.Loc.Bucket, prefix, func(i objstore.Info) error {
		parts := strings.Split(strings.TrimPrefix(i.Key, prefix), "/")
		if len(parts) != 2 {
			return nil // not this layout
		}
		name := parts[1]
		id, _, _ := strings.Cut(name, ".")
		if !archive.PlainName(parts[0]) || !archive.PlainName(id) {
			return nil // not a name ccm writes
		}
		s := byID[parts[0]+"/"+id]
		if s == nil {
			s = &session{folder: parts[0], id: id}
			byID[parts[0]+"/"+id] = s
		}
		switch {
		case name == id+archive.ManifestExt:
			s.manifest = true
		case strings.HasSuffix(name, archive.Ext) && strings.Count(name, ".") == 3: // <id>.<sha>.tar.zst
			s.archives = append(s.archives, i)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []objstore.Info
	for _, s := range byID {
		named := ""
		switch {
		case len(s.archives) == 0, s.manifest && len(s.archives) == 1:
			continue
		case s.manifest:
			m, err := t.readManifest(ctx, t.manifestKey(t.Machine, s.folder, s.id))
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue // unreadable here: kept
			}
			if named = t.named(t.Machine, s.folder, s.id, m); !slices.ContainsFunc(s.archives, func(a objstore.Info) bool { return a.Key == named }) {
				// Another session's manifest, a damaged one, or one whose
				// archive is not there: no listing shows an archive of the
				// session, and what it has may be its only copy.
				continue
			}
		}
		for _, a := range s.archives {
			if a.Key != named && a.LastModified.Before(before) {
				out = append(out, a)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// RemoveOrphans deletes the objects Orphans returned, and returns those it
// removed. Each is looked at again just before it goes: the listing may
// be seconds old, and not every writer of this machine's prefix holds the
// caller's lock (another config dir has a ccm home and a lock of its own;
// an export takes none). An object that a manifest names now (a run sent
// the same archive again and committed it), that was written again since
// it was listed (such a run, before its manifest), or whose session's
// manifest cannot be read stays.
func (t *Target) RemoveOrphans(ctx context.Context, orphans []objstore.Info) ([]objstore.Info, error) {
	prefix := t.Loc.Key(t.Machine) + "/"
	var done []objstore.Info
	for _, o := range orphans {
		folder, name, _ := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		id, _, _ := strings.Cut(name, ".")
		m, err := t.readManifest(ctx, t.manifestKey(t.Machine, folder, id))
		var oe *objstore.Error
		switch {
		case err == nil:
			if named := t.named(t.Machine, folder, id, m); named == "" || named == o.Key {
				continue // committed since it was listed, or a manifest not of the session: kept
			}
		case objstore.IsNotFound(err):
		case errors.As(err, &oe), ctx.Err() != nil:
			return done, err // the server
		default:
			continue // a manifest there now that cannot be read: kept
		}
		info, err := t.Client.Head(ctx, t.Loc.Bucket, o.Key)
		if objstore.IsNotFound(err) {
			continue
		}
		if err != nil {
			return done, err
		}
		if !info.LastModified.Truncate(time.Second).Equal(o.LastModified.Truncate(time.Second)) || info.ETag != o.ETag {
			continue // written again since it was listed
		}
		if err := t.Client.Delete(ctx, t.Loc.Bucket, o.Key); err != nil {
			return done, err
		}
		done = append(done, o)
	}
	return done, nil
}

// URL is an object's s3:// URL in the target's bucket.
func (t *Target) URL(key string) string { return t.url(key) }
