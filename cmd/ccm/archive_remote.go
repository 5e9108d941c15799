package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/search"
	"ccm/sessions/archive"
	"ccm/sessions/remote"
)

// remoteArchive is ccm archive --to s3://...: each session is packed, as
// every archive is (self-contained, with a marker), into a staging folder
// under ccm's home, uploaded and confirmed, and only then do its
// originals go (archive.Finish, with all its checks); the staged copy
// goes after. A run killed at any point is recovered from the staging
// folder like a local archive folder: undone while every original is in
// place, finished once one is gone (its archive was in the bucket before
// any original went).
type remoteArchive struct {
	target *remote.Target
	stage  string
	// parts writes the search index parts of archives uploaded.
	parts func(ctx context.Context, uploaded []search.Written)
}

// remoteStage is the staging folder of archives on their way to or from
// object storage (kind "archive" or "unarchive"): a fixed place, so that
// the next run, under the same maintenance lock, recovers what a killed
// one left there.
func remoteStage(g globalOptions, kind string) (string, error) {
	dir := remoteStagePath(g, kind)
	return dir, fsutil.MkdirPrivate(dir)
}

// remoteStagePath is remoteStage's folder, not created.
func remoteStagePath(g globalOptions, kind string) string {
	return filepath.Join(ccmHome(g), "tmp", kind+"-s3")
}

// newRemoteArchive connects and makes the staging folder (a dry run only
// names it: it writes nothing).
func newRemoteArchive(ctx context.Context, o archiveOptions) (*remoteArchive, error) {
	t, err := openRemote(ctx, o.globalOptions, o.To, o.Endpoint)
	if err != nil {
		return nil, err
	}
	ra := &remoteArchive{target: t, stage: remoteStagePath(o.globalOptions, "archive"),
		parts: func(ctx context.Context, w []search.Written) { writeParts(ctx, o, w) }}
	if o.DryRun {
		return ra, nil
	}
	if ra.stage, err = remoteStage(o.globalOptions, "archive"); err != nil {
		t.Close()
		return nil, err
	}
	return ra, nil
}

// close stops the helper.
func (ra *remoteArchive) close() {
	if ra != nil {
		ra.target.Close()
	}
}

// tidy removes, once the staging folder is recovered, the staged archives
// without a marker: a run that finished them (or their recovery) had them
// in the bucket before any original went, and was stopped before it
// removed the staged copy. An archive whose recovery failed keeps its
// marker, and stays.
func (ra *remoteArchive) tidy() error {
	if ra == nil {
		return nil
	}
	return dropUnmarked(ra.stage)
}

// dropUnmarked removes the archives under a staging folder that no
// marker names, with their sidecars, the sidecars whose archive is gone
// (a run killed as it removed its staged copy), and the project folders
// left empty (one per project a run staged, else kept for good): the
// folder is ccm's own, and what a marker names is all a recovery needs.
func dropUnmarked(stage string) error {
	list, err := archive.List(stage)
	if err != nil {
		return err
	}
	for _, l := range list {
		if archive.Pending(l.Path) {
			continue
		}
		for _, p := range []string{l.Path, archive.SidecarPath(l.Path)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	sides, err := filepath.Glob(filepath.Join(stage, "*", "*"+archive.ManifestExt))
	if err != nil {
		return err
	}
	for _, side := range sides {
		a := strings.TrimSuffix(side, archive.ManifestExt) + archive.Ext
		if _, err := os.Lstat(a); errors.Is(err, fs.ErrNotExist) && !archive.Pending(a) {
			if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	entries, err := os.ReadDir(stage)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			os.Remove(filepath.Join(stage, e.Name())) // only when empty
		}
	}
	return nil
}

// dropOrphans removes this machine's archive objects that no manifest has
// named for a day (remote.Orphans: stopped uploads, superseded archives
// whose removal was stopped), or in a dry run only lists them; it returns
// their URLs and size. The maintenance lock keeps this ccm home's other
// runs out, not those of another config dir of this machine nor an
// export: RemoveOrphans looks at each object again before it goes.
// Housekeeping: a failure is a warning.
func (ra *remoteArchive) dropOrphans(ctx context.Context, g globalOptions, now time.Time, dry bool) ([]string, int64) {
	orphans, err := ra.target.Orphans(ctx, now.Add(-remote.OrphanAge))
	if err == nil && !dry {
		orphans, err = ra.target.RemoveOrphans(ctx, orphans)
	}
	if err != nil && !g.JSON && ctx.Err() == nil {
		fmt.Fprintf(g.Stderr, "ccm: warning: unfinished uploads under %s: %v\n", ra.target, err)
	}
	var urls []string
	var bytes int64
	for _, o := range orphans {
		urls = append(urls, ra.target.URL(o.Key))
		bytes += o.Size
	}
	return urls, bytes
}

// upload sends a packed session; on error the session is not archived
// (its originals were never touched).
func (ra *remoteArchive) upload(ctx context.Context, p *archive.Packed) (*remote.Uploaded, error) {
	return ra.target.Upload(ctx, p.Archive, p.Manifest)
}

// settle follows a batch's Finish: a session whose originals went (or
// began to go) loses its staged copy, its upload is committed (the
// archive it superseded goes); one whose originals stay (written to
// meanwhile, or interrupted) has its upload undone, which leaves the
// bucket as it was before: no listing shows the session archived by this
// run, and an archive that was there already stays.
func (ra *remoteArchive) settle(ctx context.Context, batch []*packedItem) {
	if ra == nil {
		return
	}
	ctx = context.WithoutCancel(ctx) // an interrupted run still takes back its uploads
	var done []*packedItem
	var uploaded []search.Written
	for _, pi := range batch {
		if pi.p.Archive == "" {
			ra.target.Undo(ctx, pi.up)
			continue
		}
		ra.target.Commit(ctx, pi.up)
		if archive.Pending(pi.p.Archive) {
			continue // its originals' removal failed: the next run finishes it from here
		}
		done = append(done, pi)
		if !pi.up.Kept { // a kept archive's manifest is the earlier one's: its search downloads it
			uploaded = append(uploaded, search.Written{Path: pi.p.Archive, URL: pi.up.URL, Created: pi.p.Manifest.Created})
		}
	}
	// The staged copies are read once more for their search parts, so
	// that a search of the bucket has nothing of this machine's to
	// download.
	ra.parts(ctx, uploaded)
	for _, pi := range done {
		pi.p.Discard()
		pi.p.Archive = pi.up.URL
	}
}
