package main

import (
	"context"
	"os"
	"path/filepath"

	"ccm/ccm"
	"ccm/sessions/archive"
	"ccm/sessions/bundle"
	"ccm/sessions/remote"
)

// remoteArchive is ccm archive --to s3://...: each session is packed
// into a local staging folder, self-contained (its stubs' content as
// extra members), uploaded and confirmed, and only then do its originals
// go (archive.Finish, with all its checks); the staged copy goes after.
type remoteArchive struct {
	target *remote.Target
	store  *ccm.Store
	stage  string
}

// newRemoteArchive connects and makes the staging folder. Staging folders
// that a killed run left are removed first: the caller holds the
// maintenance lock, so no other archive run uses them.
func newRemoteArchive(ctx context.Context, o archiveOptions) (*remoteArchive, error) {
	t, err := openRemote(ctx, o.globalOptions, o.To, o.Endpoint)
	if err != nil {
		return nil, err
	}
	if old, _ := filepath.Glob(filepath.Join(ccmHome(o.globalOptions), "tmp", "archive-*")); len(old) > 0 && !o.DryRun {
		for _, d := range old {
			os.RemoveAll(d)
		}
	}
	ra := &remoteArchive{target: t}
	ra.store, _ = openStore(o.globalOptions)
	if !o.DryRun {
		if ra.stage, err = stageDir(o.globalOptions, "archive"); err != nil {
			return nil, err
		}
	}
	return ra, nil
}

// close stops the helper and removes the staging folder.
func (ra *remoteArchive) close() {
	if ra == nil {
		return
	}
	ra.target.Close()
	if ra.stage != "" {
		os.RemoveAll(ra.stage)
	}
}

// extra makes a session's archive self-contained; nil for a local archive.
func (ra *remoteArchive) extra(ctx context.Context, r string, project string, o archiveOptions) func([]string) ([]archive.Member, error) {
	if ra == nil {
		return nil
	}
	dir := filepath.Join(ra.stage, "blobs-"+r)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func([]string) ([]archive.Member, error) { return nil, err }
	}
	return bundle.Contents(ctx, ra.store, dir, bundle.NewNote(project, ra.target.Machine, version(), o.Now))
}

// upload sends a packed session and returns its URL; on error the
// session is not archived (its originals were never touched).
func (ra *remoteArchive) upload(ctx context.Context, p *archive.Packed) (string, error) {
	os.RemoveAll(filepath.Join(ra.stage, "blobs-"+p.Manifest.Session))
	up, err := ra.target.Upload(ctx, p.Archive, p.Manifest)
	if err != nil {
		return "", err
	}
	return up.URL, nil
}

// settle follows a batch's Finish: a session whose originals went (or
// began to go) loses its staged copy, the archive is in the bucket; one
// whose originals stay (written to meanwhile, or interrupted) loses its
// uploaded archive, manifest first, so no listing shows it archived.
func (ra *remoteArchive) settle(ctx context.Context, batch []*packedItem) {
	if ra == nil {
		return
	}
	for _, pi := range batch {
		if pi.p.Archive == "" {
			m := pi.p.Manifest
			ra.target.Remove(context.WithoutCancel(ctx), ra.target.Machine, m.Folder, m.Session)
			continue
		}
		pi.p.Discard()
		pi.p.Archive = pi.url
	}
}
