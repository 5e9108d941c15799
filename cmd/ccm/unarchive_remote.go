package main

import (
	"context"
	"fmt"
	"os"

	"ccm/ccm"
	"ccm/sessions"
	"ccm/sessions/bundle"
	"ccm/sessions/remote"
)

// runUnarchiveRemote is ccm unarchive --from s3://...: each archive is
// downloaded and checked against its manifest, then its session put back
// exactly where it was (same folder, records unchanged, archived mtimes
// unless --touch), its stubs' content into the store. The archive stays
// in the bucket: it is the team's copy.
func runUnarchiveRemote(ctx context.Context, o unarchiveOptions) error {
	t, err := openRemote(ctx, o.globalOptions, o.From, o.Endpoint)
	if err != nil {
		return err
	}
	defer t.Close()
	if _, err := sessions.ListProjects(o.ClaudeDir); err != nil {
		return err
	}
	lk, err := maintenanceLock(ctx, o.globalOptions)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	list, err := t.List(ctx)
	if err != nil {
		return err
	}
	var todo []remote.Listed
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
			todo = append(todo, l)
		}
		if len(todo) == 0 {
			return fmt.Errorf("no archived session of project %s under %s", o.Project, t)
		}
	} else {
		for _, id := range o.IDs {
			l, err := pickRemote(list, id, t)
			if err != nil {
				return err
			}
			todo = append(todo, *l)
		}
	}
	stage, err := stageDir(o.globalOptions, "unarchive")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	var items []*unarchiveItem
	failed := 0
	for _, l := range todo {
		it := &unarchiveItem{Session: l.Manifest.Session, Archive: l.URL, Project: l.Manifest.Project}
		items = append(items, it)
		p, err := unarchiveOneRemote(ctx, t, l, stage, o, st)
		if err != nil {
			it.Result, it.Error = "failed", err.Error()
			failed++
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
			}
			continue
		}
		it.Result, it.Files = "restored", p.Files
		if !o.JSON {
			fmt.Fprintf(o.Stdout, "restored %s (%d files, the content of %d stubs) to %s from %s (the archive stays there)\n",
				it.Session, it.Files, p.Blobs, shortHome(it.Project), l.URL)
			if len(p.Missing) > 0 {
				fmt.Fprintf(o.Stderr, "ccm: warning: %s: the content of %d stubs is in neither the archive nor the store: they stay stubs\n", it.Session, len(p.Missing))
			}
		}
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"sessions": items, "failed": failed}); err != nil {
			return err
		}
	}
	if failed > 0 {
		if len(items) == 1 {
			return silentError{code: exitError}
		}
		return silentError{code: exitFindings}
	}
	return nil
}

func unarchiveOneRemote(ctx context.Context, t *remote.Target, l remote.Listed, stage string, o unarchiveOptions, st *ccm.Store) (*bundle.Plan, error) {
	path, err := t.Fetch(ctx, l, stage)
	if err != nil {
		return nil, err
	}
	defer os.Remove(path)
	return bundle.Import(ctx, path, bundle.ImportOptions{ConfigDir: o.ClaudeDir, Store: st, Exact: true,
		Force: o.Force, KeepMTimes: !o.Touch, Now: o.Now})
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
