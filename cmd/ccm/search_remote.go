package main

import (
	"context"

	"ccm/internal/ui"
	"ccm/search"
	"ccm/sessions"
	"ccm/sessions/remote"
)

// searchRemote lists the archives in object storage that ccm search
// --archived --from names, for the index to take in: every machine's, the
// newest archive of each session (the one unarchive --from restores, so a
// hit's resume line brings back what was searched). Each is downloaded
// only when the index has no part for it. The caller closes the target.
func searchRemote(ctx context.Context, o searchOptions) (*remote.Target, *search.Remote, error) {
	t, err := openRemote(ctx, o.globalOptions, o.From, o.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	// The manifests of archives listed before are not read again: the
	// listing cache has what a listing shows, and an archive downloaded
	// reads its manifest first (Complete).
	c := listingCache(o.globalOptions, t)
	list, err := t.ListKnown(ctx, c.Known)
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	c.Save(list) // a cache not written is only slower next time
	picked, _, err := list.Select(nil, sessions.Selector{}, o.Now, false)
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	r := &search.Remote{URL: t.String()}
	for _, l := range picked {
		r.Archives = append(r.Archives, search.RemoteArchive{URL: l.URL, Folder: l.Manifest.Folder,
			Session: l.Manifest.Session, Size: l.Size, Created: l.Manifest.Created,
			Fetch: func(ctx context.Context, dest string) error {
				if err := t.Complete(ctx, &l); err != nil {
					return err
				}
				return t.FetchTemp(ctx, l, dest)
			}})
	}
	return t, r, nil
}

// unarchiveFrom is the command that brings back a session archived in
// object storage, before its id, as a hit's resume line gives it.
func unarchiveFrom(o searchOptions, target string) string {
	cmd := "ccm unarchive --from " + ui.ShellQuote(target)
	if o.Endpoint != "" {
		cmd += " --endpoint " + ui.ShellQuote(o.Endpoint)
	}
	return cmd
}
