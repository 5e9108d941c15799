package main

import (
	"context"
	"io"
	"time"

	"ccm/sessions"
	"ccm/sessions/archive"
)

// fetchArchives is ccm unarchive --from s3://...: the archives the ids
// and selectors choose are found among every machine's under the prefix
// (the newest, when several have a session), downloaded into stage at
// <folder>/<id>.tar.zst with their manifests as sidecars, each checked
// against its manifest, and then restored exactly as a local archive is
// (archive.Extract: same checks, markers, content into the store). The
// archive stays in the bucket: it is the team's copy. A download that
// fails is an item whose Result is "failed", for the caller to report;
// the rest go on.
func fetchArchives(ctx context.Context, o unarchiveOptions, stage string) ([]*unarchiveItem, error) {
	// Downloads a killed run left, not being restored (no marker), go.
	if err := dropUnmarked(stage); err != nil {
		return nil, err
	}
	t, err := openRemote(ctx, o.globalOptions, o.From, o.Endpoint)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	list, err := t.List(ctx)
	if err != nil {
		return nil, err
	}
	picked, missing, err := list.Select(o.IDs, o.Select, o.Now, false)
	if err != nil {
		return nil, archiveSelectError(err)
	}
	if len(missing) > 0 {
		return nil, usagef("no archive of session %s under %s (ccm sessions --archived --from %s lists them)", missing[0], t, t)
	}
	if len(picked) == 0 {
		return nil, usagef("no archived session under %s matches (ccm sessions --archived --from %s lists them)", t, t)
	}
	items := make([]*unarchiveItem, len(picked))
	forEach(ctx, io.Discard, true, "", len(picked), 4, func(i int) { // network-bound: as many as the helpers
		l := picked[i]
		m := l.Manifest
		it := &unarchiveItem{Session: m.Session, Archive: l.URL, Project: m.Project,
			file: archive.ArchivePath(stage, m.Folder, m.Session)}
		if err := t.Fetch(ctx, l, it.file); err != nil {
			it.Result, it.Error = "failed", err.Error()
		}
		items[i] = it
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// remoteArchivedRows lists the archives under an s3:// URL that sel
// chooses, every machine's, as rows from their manifests.
func remoteArchivedRows(ctx context.Context, g globalOptions, url, endpoint string, sel sessions.Selector, now time.Time) ([]*sessions.Row, error) {
	t, err := openRemote(ctx, g, url, endpoint)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	list, err := t.List(ctx)
	if err != nil {
		return nil, err
	}
	picked, missing, err := list.Select(nil, sel, now, true)
	if err != nil {
		return nil, archiveSelectError(err)
	}
	if len(missing) > 0 {
		return nil, usagef("no archive of session %s under %s", missing[0], t)
	}
	var rows []*sessions.Row
	for _, l := range picked {
		r := archivedRow(l.Manifest, l.URL)
		r.Machine = l.Machine
		rows = append(rows, r)
	}
	return rows, nil
}
