package main

import (
	"context"
	"fmt"
	"io"

	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/sessions/remote"
)

// fetchArchives is ccm unarchive --from s3://...: the archives of the
// ids (or the project) are found among every machine's under the prefix
// (the newest, when several have a session), downloaded into stage at
// <folder>/<id>.tar.zst with their manifests as sidecars, each checked
// against its manifest, and then restored exactly as a local archive is
// (archive.Extract: same checks, markers, content into the store). The
// archive stays in the bucket: it is the team's copy. A download that
// fails is a failed item, said and counted; the rest go on.
func fetchArchives(ctx context.Context, o unarchiveOptions, stage string) ([]*unarchiveItem, int, error) {
	// Downloads a killed run left, not being restored (no marker), go.
	if err := dropUnmarked(stage); err != nil {
		return nil, 0, err
	}
	t, err := openRemote(ctx, o.globalOptions, o.From, o.Endpoint)
	if err != nil {
		return nil, 0, err
	}
	defer t.Close()
	list, err := t.List(ctx)
	if err != nil {
		return nil, 0, err
	}
	var picked []remote.Listed
	if o.Project != "" {
		latest := map[string]remote.Listed{}
		for _, l := range list.Archives {
			m := l.Manifest
			if sessions.MatchProject(o.Project, m.Project, m.Folder) {
				if cur, ok := latest[m.Session]; !ok || m.Created.After(cur.Manifest.Created) {
					latest[m.Session] = l
				}
			}
		}
		for _, l := range latest {
			picked = append(picked, l)
		}
		if len(picked) == 0 {
			return nil, 0, fmt.Errorf("no archived session of project %s under %s", o.Project, t)
		}
	} else {
		for _, id := range o.IDs {
			l, err := pickRemote(list, id, t)
			if err != nil {
				return nil, 0, err
			}
			picked = append(picked, *l)
		}
	}
	items := make([]*unarchiveItem, len(picked))
	errs := make([]error, len(picked))
	forEach(ctx, io.Discard, true, "", len(picked), 4, func(i int) { // network-bound: as many as the helpers
		l := picked[i]
		m := l.Manifest
		items[i] = &unarchiveItem{Session: m.Session, Archive: l.URL, Project: m.Project,
			file: archive.ArchivePath(stage, m.Folder, m.Session)}
		errs[i] = t.Fetch(ctx, l, items[i].file)
	})
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	failed := 0
	for i, it := range items {
		if errs[i] != nil {
			it.Result, it.Error = "failed", errs[i].Error()
			failed++
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %v\n", errs[i])
			}
		}
	}
	return items, failed, nil
}

// remoteArchivedRows lists every machine's archives under an s3:// URL as
// rows, from their manifests.
func remoteArchivedRows(ctx context.Context, g globalOptions, url, endpoint, project string) ([]*sessions.Row, error) {
	t, err := openRemote(ctx, g, url, endpoint)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	list, err := t.List(ctx)
	if err != nil {
		return nil, err
	}
	var rows []*sessions.Row
	for _, l := range list.Archives {
		m := l.Manifest
		if project != "" && !sessions.MatchProject(project, m.Project, m.Folder) {
			continue
		}
		rows = append(rows, &sessions.Row{Project: m.Project, Folder: m.Folder, ID: m.Session, Title: m.Title, Prompt: m.Prompt,
			Records: m.Records, Context: m.Context, ModTime: m.LastModified, Archived: true, Archive: l.URL, Machine: l.Machine, TotalBytes: m.Bytes})
	}
	return rows, nil
}
