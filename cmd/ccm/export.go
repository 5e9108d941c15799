package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/sessions/bundle"
	"ccm/sessions/remote"
)

type exportOptions struct {
	globalOptions
	Select   sessions.Selector
	Out      string // FILE, DIR or s3://BUCKET/PREFIX
	Endpoint string
	Redact   bool
	DryRun   bool
	Verbose  bool // the plan after the summary
	Jobs     int
	Now      time.Time
}

func newExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write sessions as self-contained bundles, to move them to another machine or path",
		ArgsUsage: "[FILE|DIR...] -o FILE|DIR|s3://BUCKET/PREFIX",
		Description: `Writes one bundle per session: a verified archive (the format of ccm archive)
of its transcript, its subagents/ and tool-results/ folders, file-history
and todos, the stored content of every stub it holds, and a manifest with
every file's SHA-256 (not its purge backups). The session stays where it
is. Each bundle is read back and checked before it is published; a session
being written is exported up to its last whole record.

-o FILE writes one session's bundle to FILE (name it .tar.zst); -o DIR
writes DIR/<session>.tar.zst for each, with its manifest beside it as
<session>.manifest.json (ccm import reads it instead of unpacking twice);
-o s3://BUCKET/PREFIX uploads each to PREFIX/<machine>/<project
folder>/<session>.<sha>.tar.zst with its manifest written last (see
docs/remote.md), each upload checked by the server against the archive's
SHA-256.

--redact replaces every match of the patterns in CCM_REDACT_FILE (default
<ccm home>/redact.txt, one regular expression a line) with [REDACTED], in
every file and stored content that leaves the machine; the manifest says
how many patterns and matches (never the patterns).

The summary comes first, then with -v the plan: each session, its size and
where its bundle goes. ccm import puts a bundle's session back, on this
machine or another, under another project path if asked.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "where bundles go: `FILE`, DIR or s3://BUCKET/PREFIX"},
			&cli.BoolFlag{Name: "redact", Usage: "replace the patterns of CCM_REDACT_FILE in what leaves the machine"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			dryRunFlag("the sessions are chosen, nothing is packed or written"),
			verboseFlag("the plan: each session, its size and where its bundle goes"),
			jobsFlag("sessions exported at once", "number of CPUs"),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			o := exportOptions{globalOptions: globals(cmd), Select: sel, Out: cmd.String("output"), Endpoint: cmd.String("endpoint"),
				Redact: cmd.Bool("redact"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Jobs: int(cmd.Int("jobs"))}
			return runExport(ctx, o)
		},
	}
}

// exportItem is one session's plan and outcome.
type exportItem struct {
	Session  string   `json:"session"`
	Project  string   `json:"project"`
	Bytes    int64    `json:"bytes"`
	Dest     string   `json:"destination"`
	Result   string   `json:"result,omitempty"` // exported, failed
	Error    string   `json:"error,omitempty"`
	Packed   int64    `json:"bundle_bytes,omitempty"`
	Blobs    int      `json:"stored_contents,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	Snapshot bool     `json:"snapshot,omitempty"`
	row      *sessions.Row
	staged   string // the bundle, made, before publishBundles
}

func runExport(ctx context.Context, o exportOptions) error {
	if o.Out == "" {
		return usagef("export needs -o FILE, DIR or s3://BUCKET/PREFIX (see ccm export --help)")
	}
	if !o.Select.Given() {
		return usagef("%s", sessions.ErrNothingGiven)
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	var red *bundle.Redactor
	if o.Redact {
		file := maintainConfig(o.globalOptions).Path("CCM_REDACT_FILE")
		if file == "" {
			file = filepath.Join(ccmHome(o.globalOptions), "redact.txt")
		}
		var err error
		if red, err = bundle.LoadRedactor(file); err != nil {
			return usagef("%v", err)
		}
	}
	var target *remote.Target
	if isRemote(o.Out) {
		var err error
		if target, err = openRemote(ctx, o.globalOptions, o.Out, o.Endpoint); err != nil {
			return err
		}
		defer target.Close()
		if !o.DryRun {
			// An upload replaces the session's archive in the bucket (the
			// same keys as archive --to): not while an archive run of
			// this machine is between its upload and its commit.
			lk, err := maintenanceLock(ctx, o.globalOptions)
			if err != nil {
				return err
			}
			defer lk.Unlock()
		}
	}
	sel, err := selectSessions(ctx, o.globalOptions, o.Select, sessions.SelectOptions{Now: o.Now, Sessions: true})
	if err != nil {
		return err
	}
	if err := wholeSessionsOnly(o.globalOptions, "export", sel); err != nil {
		return err
	}
	rows, scanErrs := sessions.Rows(ctx, o.ClaudeDir, sel, sessions.Options{Now: o.Now})
	if err := ctx.Err(); err != nil {
		return err
	}
	// What the scan could not read is a failed item, reported and
	// counted; the rest is exported.
	failed := newItemErrors(o.globalOptions)
	failed.addAll(scanErrs)
	items := []*exportItem{}
	for _, r := range rows {
		it := &exportItem{Session: r.ID, Project: r.Project, Bytes: r.TotalBytes, Snapshot: r.Live, row: r}
		if r.Error != "" {
			it.Result, it.Error = "failed", r.Error
			failed.add(fmt.Errorf("%s: %s", r.Path, r.Error))
		}
		items = append(items, it)
	}
	if len(items) == 0 && failed.count() == 0 {
		// Selectors that chose nothing: nothing to do, not an error.
		return exportReport(o, items, failed, o.DryRun)
	}
	file := target == nil && strings.HasSuffix(o.Out, archive.Ext)
	if file && len(items) > 1 {
		return usagef("-o %s names one file, and %d sessions are selected: give -o DIR", o.Out, len(items))
	}
	for _, it := range items {
		switch {
		case target != nil:
			it.Dest = target.Loc.URL(target.Machine, it.row.Folder, it.Session+archive.Ext)
		case file:
			it.Dest = o.Out
		default:
			it.Dest = filepath.Join(o.Out, it.Session+archive.Ext)
		}
	}
	if o.DryRun {
		return exportReport(o, items, failed, true)
	}
	outDir := o.Out
	if file {
		outDir = filepath.Dir(o.Out)
	}
	stageParent, prefix := "", "export-" // <ccm home>/tmp, for an upload
	if target == nil {
		if err := fsutil.MkdirPrivate(outDir); err != nil {
			return err
		}
		stageParent, prefix = outDir, ".ccm-export-" // beside the bundles: published by a rename
	}
	stage, done, err := stageDir(ctx, o.globalOptions, stageParent, prefix)
	if err != nil {
		return err
	}
	defer done()
	st, _ := openStore(o.globalOptions)
	todos := sessions.ReadTodos(o.ClaudeDir)
	machine := remote.MachineName(maintainConfig(o.globalOptions).String("CCM_MACHINE"))
	if target != nil {
		machine = target.Machine
	}
	fail := func(it *exportItem, err error) {
		it.Result, it.Error = "failed", err.Error()
		failed.add(fmt.Errorf("%s: %w", it.Session, err))
	}
	var mu sync.Mutex
	forEach(ctx, o.Stderr, o.JSON, "exporting", len(items), o.Jobs, func(i int) {
		it := items[i]
		if it.Result == "failed" {
			return // unreadable, and said
		}
		err := exportOne(ctx, o, it, st, red, target, filepath.Join(stage, it.Session), machine, todos)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fail(it, err)
			return
		}
		it.Result = "exported"
		if len(it.Missing) > 0 && !o.JSON {
			fmt.Fprintf(o.Stderr, "ccm: warning: %s: the content of %d stubs is not in the store (pruned?): they stay stubs wherever it is imported\n", it.Session, len(it.Missing))
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, it := range publishBundles(items) {
		failed.add(fmt.Errorf("%s: %s", it.Session, it.Error))
	}
	return exportReport(o, items, failed, false)
}

// exportOne makes one session's bundle in stage: uploaded when the
// destination is object storage, else left in stage (it.staged) for
// publishBundles.
func exportOne(ctx context.Context, o exportOptions, it *exportItem, st *ccm.Store, red *bundle.Redactor, target *remote.Target, stage, machine string, todos sessions.Todos) error {
	r := it.row
	related, relDirs, errs := sessions.RelatedIn(o.ClaudeDir, r.ID, todos)
	if len(errs) > 0 {
		return errs[0]
	}
	root, err := bundle.FindRoot(r.Folder, r.Path, r.Project)
	if err != nil {
		return err
	}
	// Purge backups stay: they hold what the stubs stand for, which the
	// bundle carries already, and would double its size.
	ss := *r.Session
	ss.Backups = nil
	src := archive.Source{ConfigDir: o.ClaudeDir, Session: &ss, Related: related, RelDirs: relDirs,
		Project: root, Title: r.Title, Prompt: r.Prompt, Records: r.Records, Context: r.Context}
	if err := fsutil.MkdirPrivate(stage); err != nil {
		return err
	}
	p, err := bundle.Make(ctx, src, bundle.Options{Store: st, Redact: red, Snapshot: r.Live, Stage: stage,
		Level: archiveLevel, Now: o.Now, Machine: machine, Version: version()})
	os.RemoveAll(filepath.Join(stage, "cfg")) // a snapshot, packed
	os.RemoveAll(filepath.Join(stage, "store"))
	if err != nil {
		return err
	}
	it.Packed, it.Blobs, it.Missing = p.ArchiveBytes, len(p.Manifest.Content), p.Manifest.Missing
	if target != nil {
		defer p.Discard()
		up, err := target.Upload(ctx, p.Archive, p.Manifest)
		if err != nil {
			return err
		}
		it.Dest = up.URL       // its name holds its SHA-256, known only now
		target.Commit(ctx, up) // the bundle it replaced goes; left behind, it is unlisted bytes
		return nil
	}
	it.staged = p.Archive
	if filepath.Base(it.Dest) != it.Session+archive.Ext {
		os.Remove(archive.SidecarPath(p.Archive)) // -o FILE: the bundle alone
	}
	return nil
}

// publishBundles makes the staged bundles durable (their fsyncs at once,
// sharing the journal's commits) and renames each to its destination,
// replacing an earlier export of the session; then the folder is synced
// once. It returns the items whose bundle failed (their Error says why).
func publishBundles(items []*exportItem) (failed []*exportItem) {
	var paths []string
	for _, it := range items {
		if it.staged != "" {
			paths = append(paths, it.staged, archive.SidecarPath(it.staged))
		}
	}
	if len(paths) == 0 {
		return nil
	}
	err := fsutil.SyncFiles(paths, nil)
	dirs := map[string]bool{}
	for _, it := range items {
		if it.staged == "" {
			continue
		}
		if err == nil {
			// The sidecar first: a bundle is never beside another's.
			side := archive.SidecarPath(it.staged)
			if _, serr := os.Stat(side); serr == nil {
				err = os.Rename(side, archive.SidecarPath(it.Dest))
			} else {
				os.Remove(archive.SidecarPath(it.Dest))
			}
			if err == nil {
				err = os.Rename(it.staged, it.Dest)
			}
		}
		if err != nil {
			it.Result, it.Error = "failed", err.Error()
			failed = append(failed, it)
			continue
		}
		dirs[filepath.Dir(it.Dest)] = true
	}
	for d := range dirs {
		if err := fsutil.SyncDir(d); err != nil {
			for _, it := range items {
				if it.Result == "exported" && filepath.Dir(it.Dest) == d {
					it.Result, it.Error = "failed", err.Error()
					failed = append(failed, it)
				}
			}
		}
	}
	return failed
}

// exportReport prints the summary and, with -v, the plan after it; or
// the one JSON document.
func exportReport(o exportOptions, items []*exportItem, failed *itemErrors, dry bool) error {
	done := 0
	var bytes, packed int64
	for _, it := range items {
		bytes += it.Bytes
		packed += it.Packed
		if it.Result == "exported" {
			done++
		}
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"dry_run": dry, "destination": o.Out, "sessions": items,
			"failed": failed.count(), "errors": failed.strings()}); err != nil {
			return err
		}
	} else {
		if dry {
			fmt.Fprintf(o.Stdout, "export: would export %d sessions, %s, to %s\n", len(items), ui.Bytes(bytes), o.Out)
		} else {
			fmt.Fprintf(o.Stdout, "export: exported %d of %d sessions, %s into %s, to %s (%d failed)\n",
				done, len(items), ui.Bytes(bytes), ui.Bytes(packed), o.Out, failed.count())
		}
		if o.Verbose {
			if err := printExportPlan(o.globalOptions, items); err != nil {
				return err
			}
		}
	}
	if n := failed.count(); n > 0 {
		if len(items) == 1 {
			return silentError{code: exitError}
		}
		return silentError{code: exitFindings}
	}
	return nil
}

// printExportPlan lists each session after the summary: what was done
// with it (or would be), its size, its project and where its bundle goes.
func printExportPlan(g globalOptions, items []*exportItem) error {
	t := ui.NewTable(ui.Col{}, ui.Col{}, ui.Col{Right: true}, ui.Col{Shrink: true, Min: 16}, ui.Col{Shrink: true, Min: 20})
	for _, it := range items {
		action := it.Result
		if action == "" {
			action = "export"
		}
		where := "-> " + it.Dest
		switch {
		case it.Error != "":
			where += ": " + it.Error
		case it.Snapshot:
			where += " (live: up to its last whole record)"
		}
		t.Add(action, shortID(g, it.Session), ui.Bytes(it.Bytes), shortHome(it.Project), where)
	}
	return writeTable(g, t)
}
