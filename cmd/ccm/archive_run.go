package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"ccm/internal/ui"
	"ccm/search"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/sessions/remote"
	"ccm/transcript"
)

// archiveSessions plans and (unless a dry run) archives; it prints the plan
// and per-session errors as it goes, and returns the summary.
func archiveSessions(ctx context.Context, o archiveOptions) (*archiveSummary, error) {
	if o.Jobs < 0 {
		return nil, usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ret := sessions.ReadRetention(o.ClaudeDir)
	named := len(o.Select.Args) > 0 || o.Select.Current || o.Select.Session != ""
	age := o.Select.OlderThan
	switch {
	case age > 0:
	case named:
		// What the user named is archived whatever its age.
	default:
		age = archiveAge(o.globalOptions, ret)
	}
	if ret.Paused == "" && age > 0 && age >= ret.Period() && !o.JSON {
		fmt.Fprintf(o.Stderr, "ccm: warning: --older-than %s is not below cleanupPeriodDays (%g days): Claude Code deletes sessions before ccm archives them\n", ui.Age(age), ret.Days)
	}
	// A local archive folder, or, with --to s3://, the staging folder the
	// archives are packed into before they are uploaded (markers and the
	// recovery of a killed run work on it alike).
	root, sumRoot := archiveRoot(o.globalOptions, o.To), o.To
	if sumRoot == "" {
		sumRoot = root
	}
	if !o.DryRun && !o.HaveLock {
		lk, err := maintenanceLock(ctx, o.globalOptions)
		if err != nil {
			return nil, err
		}
		defer lk.Unlock()
	}
	if isRemote(o.To) {
		ra, err := newRemoteArchive(ctx, o)
		if err != nil {
			return nil, err
		}
		defer ra.close()
		o.remote, root = ra, ra.stage
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return nil, err
	}
	failed := o.Failed
	if failed == nil {
		failed = newItemErrors(o.globalOptions)
	}
	var recovered []archive.Recovered
	recoverFailed := 0
	if !o.DryRun {
		if _, err := sessions.ListProjects(o.ClaudeDir); err != nil {
			return nil, err // a missing config dir: nothing to recover into
		}
		local := root // with --to s3://, the staging folder, which recoverArchives covers: the archive folder too
		if o.remote != nil {
			local = archiveRoot(o.globalOptions, "")
		}
		if recovered, recoverFailed, err = recoverArchives(ctx, o.globalOptions, local, st, o.Now, o.Quiet, failed); err != nil {
			return nil, err
		}
		if err := o.remote.tidy(); err != nil {
			return nil, err
		}
	}
	back, err := archive.ReadUnarchived(unarchivedPath(o.globalOptions))
	if err != nil {
		return nil, err
	}
	sel, err := selectSessions(ctx, o.globalOptions, o.Select, sessions.SelectOptions{Now: o.Now, Sessions: true})
	if err != nil {
		return nil, err
	}
	if err := wholeSessionsOnly(o.globalOptions, "archive", sel); err != nil {
		return nil, err
	}
	rows, scanErrs := sessions.Rows(ctx, o.ClaudeDir, sel, sessions.Options{Now: o.Now})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sum := &archiveSummary{DryRun: o.DryRun, OlderThan: ui.Age(age), Root: sumRoot, Items: []*archivePlanItem{}, ScanErrors: errStrings(scanErrs),
		Recovered: recovered, Failed: recoverFailed}
	if o.remote != nil {
		sum.Unfinished, sum.UnfinishedBytes = o.remote.dropOrphans(ctx, o.globalOptions, o.Now, o.DryRun)
	}
	// Folders and transcripts the scan could not read are failed items:
	// reported and counted, the rest archived.
	sum.Failed += failed.addAll(scanErrs)
	var todo []*archivePlanItem
	for _, d := range archive.Decide(rows, archive.Policy{Age: age, Retention: ret, Unarchived: back, Now: o.Now}) {
		r := d.Row
		it := &archivePlanItem{Project: r.Project, Session: r.ID, Bytes: r.TotalBytes, Archive: d.Archive, Reason: d.Reason, row: r}
		switch {
		case d.Unreadable != "":
			it.Result, it.Error = "failed", d.Unreadable
			if failed.add(fmt.Errorf("%s: %s", r.Session.Main.Path, d.Unreadable)) {
				sum.Failed++
			}
		case d.Archive:
			todo = append(todo, it)
			sum.Planned++
			sum.Bytes += r.TotalBytes
		}
		if it.Archive || o.Verbose {
			sum.Items = append(sum.Items, it)
		}
	}
	if o.Verbose {
		// What the narrowing selectors left out is kept too, with why.
		for _, k := range sel.Skipped {
			sum.Items = append(sum.Items, &archivePlanItem{Project: sessions.DecodeFolderGuess(k.Project), Session: k.Session.ID,
				Bytes: k.Size, Reason: skipReason(k, o.Select, o.Now)})
		}
	}
	if o.DryRun || len(todo) == 0 {
		return sum, nil
	}
	// Every prune must read this folder's manifests, wherever it is and
	// whatever CCM_ARCHIVE_DIR says later: the folder is recorded in the
	// store's reference index before the first archive is written. An
	// archive in object storage needs nothing of the store: it carries
	// its content, and its staged copy goes.
	if o.remote == nil {
		if err := recordRoots(ctx, o.globalOptions, root); err != nil {
			return nil, err
		}
	}
	defer func() {
		var sidecars, gone []string
		for _, it := range todo {
			if it.Result == "archived" {
				sidecars = append(sidecars, archive.SidecarPath(it.Path))
				gone = append(gone, it.row.Path)
			}
		}
		if o.remote == nil {
			noteRefs(ctx, o.globalOptions, root, sidecars...)
		}
		noteRefs(ctx, o.globalOptions, transcript.ProjectsDir(o.ClaudeDir), gone...)
	}()
	lockDir := filepath.Join(ccmHome(o.globalOptions), "locks")
	var mu sync.Mutex
	record := func(it *archivePlanItem, res *archive.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			it.Result, it.Path, it.Packed = "archived", res.Archive, res.ArchiveBytes
			sum.Archived++
			sum.Packed += res.ArchiveBytes
			sum.NoContent += len(res.Manifest.Missing)
		case errors.Is(err, archive.ErrChanged):
			it.Result, it.Error = "left in place", err.Error()
			sum.LeftLive++
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %s: %v\n", it.Session, err)
			}
		default:
			it.Result, it.Error = "failed", err.Error()
			if failed.add(fmt.Errorf("%s: %w", it.Session, err)) {
				sum.Failed++
			}
		}
	}
	// Workers pack sessions (write, read back, verify, publish); one
	// finisher makes them durable and removes their originals a batch at a
	// time, so a batch shares its fsyncs and one read of /proc.
	packed := make(chan *packedItem, archiveBatch)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var batch []*packedItem
		var due <-chan time.Time
		var last time.Time
		for {
			select {
			case pi, ok := <-packed:
				if !ok {
					finishBatch(ctx, batch, record, o.remote)
					return
				}
				batch = append(batch, pi)
				if len(batch) < archiveBatch {
					if due == nil {
						due = time.After(max(0, archiveBatchGap-time.Since(last)))
					}
					continue
				}
			case <-due:
			}
			finishBatch(ctx, batch, record, o.remote)
			batch, due, last = nil, nil, time.Now()
		}
	}()
	todos := sessions.ReadTodos(o.ClaudeDir) // once, not once per session
	forEach(ctx, o.Stderr, o.JSON || o.Quiet, "archiving", len(todo), o.Jobs, func(i int) {
		it := todo[i]
		p, lk, err := packOne(ctx, o, it.row, root, lockDir, todos, st)
		if err != nil {
			record(it, nil, err)
			return
		}
		var up *remote.Uploaded
		if o.remote != nil {
			if up, err = o.remote.upload(ctx, p); err != nil {
				p.Discard()
				lk.Unlock()
				record(it, nil, err)
				return
			}
		}
		packed <- &packedItem{it: it, p: p, lock: lk, up: up}
	})
	close(packed)
	<-finished
	indexArchived(ctx, o, root, todo)
	var inPlace map[string]bool // nil: not every session was looked at
	if o.Select.All && o.Select.Project == "" && len(sel.Failed) == 0 {
		inPlace = map[string]bool{}
		for _, r := range rows {
			inPlace[r.ID] = true
		}
		for _, k := range sel.Skipped {
			inPlace[k.Session.ID] = true
		}
	}
	if err := forgetUnarchived(o, back, inPlace, todo); err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if sum.NoContent > 0 && !o.JSON && !o.Quiet {
		fmt.Fprintf(o.Stderr, "ccm: warning: %s stubs were archived without their content (not in the store): they stay stubs\n", ui.Count(sum.NoContent))
	}
	return sum, nil
}

// indexArchived writes the search index parts of the sessions just
// archived into the folder searches read (not --to elsewhere; --to s3://
// writes its own as it uploads: remoteArchive.settle).
func indexArchived(ctx context.Context, o archiveOptions, root string, todo []*archivePlanItem) {
	if filepath.Clean(root) != filepath.Clean(archiveRoot(o.globalOptions, "")) {
		return
	}
	var paths []search.Written
	for _, it := range todo {
		if it.Result == "archived" {
			paths = append(paths, search.Written{Path: it.Path})
		}
	}
	writeParts(ctx, o, paths)
}

// writeParts writes the search index parts of archives just written, so
// that no search has to read (or download) them; only when ccm search made
// an index. A part it could not write is a warning, not a failed session:
// the archive stands, and the next search reads that archive once to
// write the part.
func writeParts(ctx context.Context, o archiveOptions, paths []search.Written) {
	home := ccmHome(o.globalOptions)
	if len(paths) == 0 || !search.Exists(home) {
		return
	}
	warn := func(err error) {
		if !o.JSON {
			fmt.Fprintf(o.Stderr, "ccm: warning: search: %v\n", err)
		}
	}
	redact, err := search.ParseRedact(maintainConfig(o.globalOptions).String("CCM_SEARCH_REDACT"))
	if err != nil {
		warn(fmt.Errorf("CCM_SEARCH_REDACT: %v (fix it with ccm config)", err))
		return
	}
	for _, err := range search.IndexArchives(ctx, home, paths, searchPartOptions(ctx, o.globalOptions, redact), o.Jobs) {
		warn(err)
	}
}

// A batch of up to archiveBatch packed sessions shares one finish: their
// fsyncs run together and /proc is read once for them. The finisher takes
// whatever is packed, at most archiveBatchGap after its last finish ended,
// so its fsyncs overlap the workers' packing and /proc is read at most
// ten times a second.
const (
	archiveBatch    = 64
	archiveBatchGap = 100 * time.Millisecond
)
