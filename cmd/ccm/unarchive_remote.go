package main

import (
	"context"
	"time"

	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/transcript"
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
	t, picked, err := listRemote(ctx, o.globalOptions, o.From, o.Endpoint, o.IDs, o.Select, o.Now, false)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if len(picked) == 0 {
		// Nothing to do, unless --project names a project that is
		// nowhere, here or in the bucket: a wrong name.
		if p := o.Select.Project; p != "" {
			l, err := t.List(ctx)
			if err != nil {
				return nil, err
			}
			var list []archive.Listed
			for _, a := range l.Archives {
				list = append(list, archive.Listed{Path: a.Key, Manifest: a.Manifest})
			}
			if !knownProject(o.ClaudeDir, list, p) {
				return nil, usagef("no project matches %s under %s or in the archives under %s (ccm sessions --archived --from %s lists them)",
					p, transcript.ProjectsDir(o.ClaudeDir), t, t)
			}
		}
		return nil, nil
	}
	items := make([]*unarchiveItem, len(picked))
	for i, l := range picked {
		m := l.Manifest
		items[i] = &unarchiveItem{Session: m.Session, Archive: l.URL, Project: m.Project,
			file: archive.ArchivePath(stage, m.Folder, m.Session)}
	}
	errs := t.FetchAll(ctx, picked, func(i int) string { return items[i].file })
	for i, err := range errs {
		if err != nil {
			items[i].Result, items[i].Error = "failed", err.Error()
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// remoteArchivedRows lists the archives under an s3:// URL that sel
// chooses, every machine's, as rows from their manifests.
func remoteArchivedRows(ctx context.Context, g globalOptions, url, endpoint string, sel sessions.Selector, now time.Time) ([]*sessions.Row, error) {
	t, picked, err := listRemoteWith(ctx, g, url, endpoint, nil, sel, now, true, true)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var rows []*sessions.Row
	for _, l := range picked {
		r := archivedRow(l.Manifest, l.URL)
		r.Machine = l.Machine
		rows = append(rows, r)
	}
	return rows, nil
}
