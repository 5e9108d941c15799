package remote

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/sessions/archive"
)

// Fetch downloads an archive to dest, checks its size and SHA-256 (taken
// as the helper wrote it: the file is not read again) against its
// manifest, writes the manifest beside it as its sidecar (what
// archive.Verify, Extract and Read check it against) and makes both
// durable: an unarchive's recovery may need them after a power cut. The
// caller removes both. An archive that does not match is removed and
// refused.
func (t *Target) Fetch(ctx context.Context, l Listed, dest string) error {
	return t.fetch(ctx, l, dest, true)
}

// FetchTemp is Fetch for a download read once and removed (a search
// writing its index part): checked the same, not made durable.
func (t *Target) FetchTemp(ctx context.Context, l Listed, dest string) error {
	return t.fetch(ctx, l, dest, false)
}

func (t *Target) fetch(ctx context.Context, l Listed, dest string, durable bool) error {
	side := archive.SidecarPath(dest)
	fail := func(err error) error {
		os.Remove(dest)
		os.Remove(side)
		return err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
		return err
	}
	os.Remove(side) // never beside another archive
	got, err := t.Client.GetFile(ctx, t.Loc.Bucket, l.Key, dest)
	if err != nil {
		return fail(err)
	}
	if got.Size != l.Manifest.ArchiveBytes || got.SHA256 != l.Manifest.ArchiveSHA256 {
		return fail(fmt.Errorf("%s: %w: %d bytes downloaded, not the %d bytes of SHA-256 its manifest gives", l.URL, archive.ErrCorrupt, got.Size, l.Manifest.ArchiveBytes))
	}
	data, err := marshalManifest(l.Manifest)
	if err == nil {
		err = fsutil.WriteFileUnsynced(side, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	if err == nil && durable {
		err = fsutil.SyncFiles([]string{dest, side}, []string{filepath.Dir(dest)})
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// FetchAll downloads the archives of a listing as Fetch does, four at
// a time (the requests wait on the network, and as many helpers run),
// each to dest(i), and returns each one's error.
func (t *Target) FetchAll(ctx context.Context, picked []Listed, dest func(i int) string) []error {
	errs := make([]error, len(picked))
	batch.Run(ctx, len(picked), 4, func(i int) { errs[i] = t.Fetch(ctx, picked[i], dest(i)) }, nil)
	for i := range errs {
		if errs[i] == nil && ctx.Err() != nil {
			errs[i] = ctx.Err() // never fetched: the run was stopped
		}
	}
	return errs
}
