package remote

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"ccm/internal/batch"
	"ccm/internal/objstore"
	"ccm/sessions/archive"
)

// Listed is one complete archive in the bucket.
type Listed struct {
	Machine  string
	Key      string // the archive's key
	URL      string
	Size     int64
	Manifest *archive.Manifest
	// Lite: Manifest is what the caller of ListKnown knew of the archive,
	// not read from the bucket; Complete reads it.
	Lite bool
}

// Known returns what a caller knows of the archive at url of size bytes,
// as its manifest gave it when the caller read it (the session, folder,
// project, creation time and size at least), or false.
type Known func(url string, size int64) (*archive.Manifest, bool)

// Listing is every machine's archives under the target's prefix.
type Listing struct {
	Archives []Listed
	// Incomplete are archive objects no valid manifest names (an upload
	// that was stopped, or a manifest that does not match): not archives.
	Incomplete []string
	// Newer are the manifests of a format newer than this ccm reads (a
	// newer ccm's archives): not listed, and refused by Refusal.
	Newer []Unread
}

// Unread is a session's manifest that could not be read.
type Unread struct {
	Session string
	Err     error // names the manifest's URL
}

// Refusal is why the archives of the session id names (whole, or a
// prefix) cannot be read, when a newer ccm made them; nil otherwise.
func (l *Listing) Refusal(id string) error {
	for _, u := range l.Newer {
		if strings.HasPrefix(u.Session, id) {
			return u.Err
		}
	}
	return nil
}

// List reads every machine's archives under the prefix: the objects, then
// each manifest (8 at a time).
func (t *Target) List(ctx context.Context) (*Listing, error) { return t.ListKnown(ctx, nil) }

// ListKnown is List that does not read the manifest of a session whose
// one archive object known knows: an archive object never changes (its
// name carries its SHA-256), and while a manifest names another archive of
// its session, that archive's object is there too. Its Listed is Lite.
func (t *Target) ListKnown(ctx context.Context, known Known) (*Listing, error) {
	prefix := t.Loc.Prefix
	if prefix != "" {
		prefix += "/"
	}
	objects := map[string]objstore.Info{}
	if err := t.Client.List(ctx, t.Loc.Bucket, prefix, func(i objstore.Info) error {
		objects[i.Key] = i
		return nil
	}); err != nil {
		return nil, err
	}
	type cand struct {
		machine, folder, id, key string
	}
	var cands []cand
	for key := range objects {
		machine, folder, id, ok := place(strings.TrimPrefix(key, prefix), archive.ManifestExt)
		if !ok {
			continue // not this layout, or an archive
		}
		cands = append(cands, cand{machine, folder, id, key})
	}
	// Each session's archive objects: one is the archive its manifest
	// names, unless an upload is under way or was stopped.
	only := map[string]string{} // machine/folder/id: its one archive object ("" for several)
	if known != nil {
		for key := range objects {
			machine, folder, id, ok := place(strings.TrimPrefix(key, prefix), archive.Ext)
			if !ok {
				continue
			}
			s := machine + "/" + folder + "/" + id
			if _, seen := only[s]; seen {
				only[s] = ""
			} else {
				only[s] = key
			}
		}
	}
	res := make([]*Listed, len(cands))
	errs := make([]error, len(cands))
	batch.Run(ctx, len(cands), 8, func(i int) {
		c := cands[i]
		if akey := only[c.machine+"/"+c.folder+"/"+c.id]; akey != "" {
			info := objects[akey]
			if m, ok := known(t.url(akey), info.Size); ok && m.Session == c.id && m.Folder == c.folder {
				res[i] = &Listed{Machine: c.machine, Key: akey, URL: t.url(akey), Size: info.Size, Manifest: m, Lite: true}
				return
			}
		}
		m, err := t.readManifest(ctx, c.key)
		if err != nil {
			errs[i] = err
			return
		}
		akey := t.named(c.machine, c.folder, c.id, m)
		info, ok := objects[akey]
		if akey == "" || !ok || m.ArchiveBytes != info.Size {
			errs[i] = errors.New("manifest does not match")
			return
		}
		res[i] = &Listed{Machine: c.machine, Key: akey, URL: t.url(akey), Size: info.Size, Manifest: m}
	}, nil)
	out := &Listing{}
	named := map[string]bool{}
	for i, r := range res {
		if r != nil {
			out.Archives = append(out.Archives, *r)
			named[r.Key] = true
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var oe *objstore.Error
		if errors.As(errs[i], &oe) && !objstore.IsNotFound(errs[i]) {
			return nil, errs[i] // the server, not the object
		}
		if c := cands[i]; errors.Is(errs[i], archive.ErrNewer) {
			out.Newer = append(out.Newer, Unread{Session: c.id, Err: fmt.Errorf("%s: %w", t.url(c.key), errs[i])})
		}
	}
	for key := range objects {
		if strings.HasSuffix(key, archive.Ext) && !named[key] {
			out.Incomplete = append(out.Incomplete, t.url(key))
		}
	}
	sort.Slice(out.Archives, func(i, j int) bool { return out.Archives[i].Key < out.Archives[j].Key })
	sort.Strings(out.Incomplete)
	sort.Slice(out.Newer, func(i, j int) bool { return out.Newer[i].Err.Error() < out.Newer[j].Err.Error() })
	return out, nil
}

// place reads a key relative to the prefix as <machine>/<folder>/<id>...ext
// (an archive's <id>.<sha>.tar.zst, a manifest's <id>.manifest.json);
// false when it is not one: another depth or suffix, or a machine, folder
// or session that is not one plain path element (a separator, "..", a
// hidden name), which ccm never writes and no path may be built from.
func place(rel, ext string) (machine, folder, id string, ok bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[2], ext) {
		return "", "", "", false
	}
	id, _, _ = strings.Cut(parts[2], ".")
	if ext == archive.ManifestExt {
		id = strings.TrimSuffix(parts[2], ext)
	}
	ok = archive.PlainName(parts[0]) && archive.PlainName(parts[1]) && archive.PlainName(id)
	return parts[0], parts[1], id, ok
}

// Complete reads the manifest of an archive ListKnown listed from what its
// caller knew, and checks that it names that archive still.
func (t *Target) Complete(ctx context.Context, l *Listed) error {
	if !l.Lite {
		return nil
	}
	m, err := t.readManifest(ctx, t.manifestKey(l.Machine, l.Manifest.Folder, l.Manifest.Session))
	if err != nil {
		return err
	}
	if t.named(l.Machine, l.Manifest.Folder, l.Manifest.Session, m) != l.Key || m.ArchiveBytes != l.Size {
		return fmt.Errorf("%s: its manifest names another archive now (the bucket changed: list it again)", l.URL)
	}
	l.Manifest, l.Lite = m, false
	return nil
}
