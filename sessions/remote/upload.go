package remote

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"ccm/internal/objstore"
	"ccm/sessions/archive"
)

// ErrRedactedOver refuses a redacted bundle where the session's archive,
// not redacted, is: the bucket keeps the session as it was.
var ErrRedactedOver = errors.New("the session's archive there is not redacted, and a redacted bundle does not replace it (export it under another prefix)")

// Uploaded is what Upload did: what Commit completes, or Undo takes back.
type Uploaded struct {
	URL string // the archive's s3:// URL
	// Kept is true when a complete archive of the same files was there
	// already (an earlier export, or a run that was stopped before it
	// removed the originals): nothing was sent.
	Kept bool

	akey, mkey string
	existed    bool   // an object was at akey before (no manifest named it)
	prev       []byte // the manifest the upload replaced; nil: there was none
	prevKey    string // the archive prev named ("" when it could not be read)
}

// Upload puts a packed archive (file, with its manifest m, as
// sessions/archive's sidecar holds it: ArchiveBytes and ArchiveSHA256 set)
// under this machine's prefix: the archive is uploaded under a name of its
// own and confirmed by the server, then the manifest replaces the
// session's earlier one. When it returns nil both are complete. A complete
// archive of the same files already there is kept as it is. The archive
// the earlier manifest named stays until Commit, so that Undo can put
// that manifest back.
func (t *Target) Upload(ctx context.Context, file string, m *archive.Manifest) (*Uploaded, error) {
	if len(m.ArchiveSHA256) != 64 || m.ArchiveBytes <= 0 {
		return nil, errors.New("remote: the archive's manifest has no size or SHA-256")
	}
	akey := t.archiveKey(t.Machine, m.Folder, m.Session, m.ArchiveSHA256)
	mkey := t.manifestKey(t.Machine, m.Folder, m.Session)
	up := &Uploaded{URL: t.url(akey), akey: akey, mkey: mkey}
	bucket := t.Loc.Bucket
	data, err := t.Client.GetBytes(ctx, bucket, mkey, maxManifest)
	if err == nil {
		up.prev = data
		var old *archive.Manifest
		if old, err = archive.ParseManifest(data); err == nil {
			// Another session's manifest, or a damaged one, names no
			// archive here: it is replaced (Undo puts it back), and Commit
			// removes nothing for it.
			up.prevKey = t.named(t.Machine, m.Folder, m.Session, old)
			if up.prevKey != "" {
				info, herr := t.Client.Head(ctx, bucket, up.prevKey)
				if herr == nil && info.Size == old.ArchiveBytes && sameFiles(old, m) && carries(old, m) {
					up.Kept, up.URL = true, t.url(up.prevKey)
					return up, nil
				}
				if herr == nil && m.Redacted && !old.Redacted {
					// The session as it was is not replaced by a copy
					// with text blanked out: that would lose the text.
					return nil, fmt.Errorf("%s: %w", t.url(up.prevKey), ErrRedactedOver)
				}
			}
		}
	}
	if errors.Is(err, archive.ErrNewer) {
		return nil, fmt.Errorf("%s: %w", t.url(mkey), err) // a newer ccm's: not replaced
	}
	if err != nil && !objstore.IsNotFound(err) && !errors.Is(err, archive.ErrCorrupt) {
		return nil, err // the server: not replaced
	}
	if _, err := t.Client.Head(ctx, bucket, akey); err == nil {
		up.existed = true
	} else if !objstore.IsNotFound(err) {
		return nil, err
	}
	t.Client.AbortIncomplete(ctx, bucket, akey) // parts of a killed upload
	sum, err := hex.DecodeString(m.ArchiveSHA256)
	if err != nil {
		return nil, err
	}
	if err := t.Client.PutFile(ctx, bucket, akey, file, m.ArchiveBytes, sum); err != nil {
		return nil, err
	}
	side, err := marshalManifest(m)
	if err != nil {
		return nil, err
	}
	if err := t.Client.PutBytes(ctx, bucket, mkey, side); err != nil {
		return nil, err
	}
	return up, nil
}

// Commit completes an upload whose archive stays (its originals went, or
// it is an export): the archive the replaced manifest named is removed.
// Left behind (a run stopped before it), it is only bytes no listing
// shows.
func (t *Target) Commit(ctx context.Context, up *Uploaded) error {
	if up.Kept || up.prevKey == "" || up.prevKey == up.akey {
		return nil
	}
	return t.Client.Delete(ctx, t.Loc.Bucket, up.prevKey)
}

// Undo takes back an upload whose originals stay, leaving the bucket as
// it was before it: the manifest it replaced goes back (or, when there
// was none, its own goes), then the archive it added. A complete archive
// that was there already (Kept) is left as it is. Stopped between the
// two steps, it leaves an archive object no manifest names, which no
// listing shows.
func (t *Target) Undo(ctx context.Context, up *Uploaded) error {
	if up.Kept {
		return nil
	}
	bucket := t.Loc.Bucket
	var err error
	if up.prev != nil {
		err = t.Client.PutBytes(ctx, bucket, up.mkey, up.prev)
	} else {
		err = t.Client.Delete(ctx, bucket, up.mkey)
	}
	if err != nil || up.existed || up.akey == up.prevKey {
		return err
	}
	return t.Client.Delete(ctx, bucket, up.akey)
}

// carries reports whether archive a carries every stored content b does:
// an archive of the same files made when the store lacked some of their
// stubs' content does not stand for one that has it (the originals go
// after the upload, and the store's copy is then referenced by nothing
// ccm prune sees).
func carries(a, b *archive.Manifest) bool {
	have := make(map[string]bool, len(a.Content))
	for _, c := range a.Content {
		have[c.Key] = true
	}
	for _, c := range b.Content {
		if !have[c.Key] {
			return false
		}
	}
	return true
}

// sameFiles reports whether two manifests list the same files with the
// same content (the parts follow from the files, and a bundle's note says
// when it was made; the stored content is carries').
func sameFiles(a, b *archive.Manifest) bool {
	if a.Session != b.Session || a.Folder != b.Folder {
		return false
	}
	files := func(m *archive.Manifest) map[string]string {
		out := map[string]string{}
		for _, e := range m.Files {
			out[e.Path] = e.SHA256
		}
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) {
		return false
	}
	for p, sum := range fa {
		if fb[p] != sum {
			return false
		}
	}
	return true
}
