package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
	"ccm/prune"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/transcript"
)

type unarchiveOptions struct {
	globalOptions
	IDs      []string // whole, or unique prefixes
	Select   sessions.Selector
	To       string
	From     string // s3://BUCKET/PREFIX
	Endpoint string
	Force    bool
	Touch    bool
	// AllowMissingContent restores a session whose archived content is
	// missing or corrupt, naming the stubs that stay stubs.
	AllowMissingContent bool
	DryRun              bool
	Verbose             bool
	Jobs                int
	Now                 time.Time
}

func newUnarchiveCommand() *cli.Command {
	return &cli.Command{
		Name:      "unarchive",
		Usage:     "put archived sessions back, byte for byte, where claude --resume finds them",
		ArgsUsage: "ID... | --session ID | --project P | --all",
		Description: `Verifies each archive completely (every member's SHA-256 against the
manifest, the archive's own hash against its sidecar, every path against the
session's own) and only then restores it: the stored content it carries
into the CCM store (durable and verified first), then its files under the
Claude config dir with their modes and modification times; then the archive
is removed. A corrupt or truncated archive, or one naming a file that is
not its session's, is refused and left as it is. A file of the session that
already exists where a restored one would go is refused unless --force,
which renames it to <file>.backup.<stamp> first.

--allow-missing-content restores a session whose archive has intact files
but missing or corrupt stored content; the stubs whose content is lost are
named and stay stubs. An archive of an older ccm carries no content: its
stubs need the store, and unarchive says how many stay stubs.

A session brought back stays: ccm archive and maintain count its age from
the unarchive. Restored files keep their old mtimes, and Claude Code's
sweep deletes sessions by mtime: a session older than cleanupPeriodDays is
deleted at the next start of Claude Code. ccm warns; --touch gives the
restored files the current time instead.

A batch (--all, --project, --older-than, --min-size) prints one summary
line, then how long the sessions stay; -v adds each session after them.
Sessions named by id get a line each, and no summary. Warnings and
errors go to stderr, one line each.

An unarchive or archive that was interrupted (killed) is finished or
undone by the next ccm archive, unarchive or maintain.

Archived sessions are chosen by id (whole, or a prefix of 4 characters or
more that starts no other archived session's id), --session, --project,
--all, --older-than (their last write) and --min-size, as ccm sessions
--archived lists them.

--from s3://BUCKET/PREFIX restores from S3-compatible object storage (any
machine's archives under the prefix, the newest when several have the
session; docs/remote.md): each archive is downloaded and checked the same
way, its stubs' content goes into the CCM store, and it stays in the bucket.

` + exitStatusHelp,
		Flags: append(archivedSelectorFlags(),
			&cli.StringFlag{Name: "to", Usage: "archive folder (default <ccm home>/archive)"},
			&cli.StringFlag{Name: "from", Usage: "restore from object storage: `s3://BUCKET/PREFIX`"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			&cli.BoolFlag{Name: "force", Usage: "restore over existing files, keeping each as a backup"},
			&cli.BoolFlag{Name: "touch", Usage: "give restored files the current time (safe from the sweep)"},
			&cli.BoolFlag{Name: "allow-missing-content", Usage: "restore even if the archive's stored content is missing or corrupt (its stubs stay stubs)"},
			jobsFlag("sessions restored at once", "number of CPUs"),
			dryRunFlag("each archive is verified whole, and what is in the way named"),
			verboseFlag("after a batch's summary, each session and where it went (-n: every file each would put back, and where)"),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			ids := sel.Args
			sel.Args = nil
			o := unarchiveOptions{globalOptions: globals(cmd), IDs: ids, Select: sel,
				To: cmd.String("to"), From: cmd.String("from"), Endpoint: cmd.String("endpoint"), Force: cmd.Bool("force"), Touch: cmd.Bool("touch"), AllowMissingContent: cmd.Bool("allow-missing-content"),
				DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Jobs: int(cmd.Int("jobs"))}
			return runUnarchive(ctx, o)
		},
	}
}

type unarchiveItem struct {
	Session string `json:"session"`
	Archive string `json:"archive"` // its path, or with --from its URL
	Project string `json:"project,omitempty"`
	Files   int    `json:"files,omitempty"`
	Result  string `json:"result"` // restored, in place, failed
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	// Content is how much stored content went into the store; StaysStub
	// the stubs whose content is in neither the archive nor the store,
	// BadContent the archive's content found missing or corrupt.
	Content    int      `json:"content,omitempty"`
	StaysStub  []string `json:"stays_stub,omitempty"`
	BadContent []string `json:"bad_content,omitempty"`
	OldFormat  bool     `json:"old_format,omitempty"`
	file       string   // the archive to extract: Archive, or its download
}

func runUnarchive(ctx context.Context, o unarchiveOptions) error {
	if len(o.IDs) == 0 && !o.Select.Given() {
		return usagef("give session ids, --session ID, --project P or --all (see ccm unarchive --help)")
	}
	if len(o.IDs) > 0 && (o.Select.All || o.Select.Session != "") {
		return usagef("give session ids, --session ID or --all, not several of them")
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.From != "" && o.To != "" {
		return usagef("give --from s3://... or --to DIR, not both")
	}
	if _, err := sessions.ListProjects(o.ClaudeDir); err != nil {
		return err // a missing config dir
	}
	// The archives come from a folder, or, with --from, are downloaded
	// into a staging folder first; either is recovered (a killed run
	// finished or undone) before anything else. The summary names where
	// they come from: the folder, or the bucket.
	root := archiveRoot(o.globalOptions, o.To)
	where := root
	if o.From != "" {
		root, where = remoteStagePath(o.globalOptions, "unarchive"), o.From
	}
	var st *ccm.Store
	var recovered []archive.Recovered
	failed := 0
	if !o.DryRun {
		lk, err := maintenanceLock(ctx, o.globalOptions)
		if err != nil {
			return err
		}
		defer lk.Unlock()
		if st, err = openStore(o.globalOptions); err != nil {
			return err
		}
		if o.From != "" {
			if _, err := remoteStage(o.globalOptions, "unarchive"); err != nil {
				return err
			}
		}
		if recovered, failed, err = recoverArchives(ctx, o.globalOptions, root, st, o.Now, false, newItemErrors(o.globalOptions)); err != nil {
			return err
		}
	}
	var todo, here []*unarchiveItem
	var err error
	if o.From != "" {
		stage := root
		if o.DryRun {
			// A dry run downloads into a folder of its own, verifies
			// there, and leaves nothing.
			dir, done, err := dryStage("unarchive-")
			if err != nil {
				return err
			}
			defer done()
			stage = dir
		} else {
			// A download not restored (refused) goes; one whose unarchive
			// was interrupted keeps its marker, for the next run.
			defer dropUnmarked(root)
		}
		if todo, err = fetchArchives(ctx, o, stage); err != nil {
			return err
		}
	} else if todo, here, err = localArchives(o, root); err != nil {
		return err
	}
	if o.DryRun {
		return unarchiveDryRun(ctx, o, where, todo, here)
	}
	// Record the unarchive first: a session put back stays, and the next
	// archive counts its age from now. A session that fails to come back
	// is taken out of the record again at the end (after a kill, by the
	// next archive: it is not in place).
	undo := func([]string) error { return nil }
	if len(todo) > 0 {
		if undo, err = noteUnarchived(o.globalOptions, unarchiveIDs(todo), o.Now); err != nil {
			return err
		}
	}
	ret := sessions.ReadRetention(o.ClaudeDir)
	xo := archive.ExtractOptions{Force: o.Force, Touch: o.Touch, Now: o.Now, Store: st, AllowMissingContent: o.AllowMissingContent}
	var mu sync.Mutex
	var transcripts, gone []string // for the reference index
	defer func() {
		noteRefs(ctx, o.globalOptions, root, gone...)
		noteRefs(ctx, o.globalOptions, transcript.ProjectsDir(o.ClaudeDir), transcripts...)
	}()
	for _, it := range todo {
		if it.Result == "failed" { // its download
			failed++
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %s\n", it.Error)
			}
		}
	}
	forEach(ctx, o.Stderr, o.JSON, "restoring", len(todo), o.Jobs, func(i int) {
		it := todo[i]
		if it.Result == "failed" {
			return // its download failed, and was said
		}
		x, err := archive.Extract(ctx, it.file, o.ClaudeDir, xo)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			it.Result, it.Error = "failed", err.Error()
			failed++
			if !o.JSON {
				hint := ""
				if errors.Is(err, archive.ErrCorrupt) && !errors.Is(err, archive.ErrForeign) && !o.AllowMissingContent {
					hint = " (when only its stored content is damaged, --allow-missing-content restores the session without it)"
				}
				fmt.Fprintf(o.Stderr, "ccm: %v%s\n", err, hint)
			}
			return
		}
		it.Result, it.Files, it.Content, it.Project = "restored", len(x.Files), x.Content, x.Project
		it.StaysStub, it.BadContent, it.OldFormat = x.StaysStub, x.BadContent, !x.SelfContained()
		for _, f := range x.Files {
			if prune.IsTranscriptName(path.Base(f.Path)) {
				transcripts = append(transcripts, filepath.Join(o.ClaudeDir, filepath.FromSlash(f.Path)))
			}
		}
		if o.From == "" {
			gone = append(gone, archive.SidecarPath(it.file))
		}
		if !o.Touch && ret.Paused == "" && o.Now.Sub(x.LastModified) >= ret.Period() {
			it.Warning = fmt.Sprintf("last written %s ago, beyond cleanupPeriodDays (%g days): Claude Code's sweep deletes it at its next start (run with --touch, or resume it now)",
				ui.Age(o.Now.Sub(x.LastModified)), ret.Days)
		}
		if !o.JSON {
			warnRestored(o, it, x)
		}
	})
	var back []string
	for _, it := range todo {
		if it.Result == "restored" {
			back = append(back, it.Session)
		}
	}
	if len(back) < len(todo) {
		// A session that did not come back is not recorded.
		if err := undo(back); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"sessions": append(todo, here...), "failed": failed, "recovered": recovered}); err != nil {
			return err
		}
	} else {
		printUnarchived(o, where, todo, here, failed, ret)
	}
	if failed > 0 {
		if len(todo) == 1 {
			return silentError{code: exitError}
		}
		return silentError{code: exitFindings}
	}
	return nil
}

// localArchives picks the archives under root the ids and selectors
// choose; an id without an archive whose session is in place was
// restored already (by an earlier, interrupted run of the same list,
// say), and is here.
func localArchives(o unarchiveOptions, root string) (todo, here []*unarchiveItem, err error) {
	list, err := archive.List(root)
	if err != nil {
		return nil, nil, err
	}
	picked, missing, err := archive.Select(list, o.IDs, o.Select, o.Now)
	if err != nil {
		return nil, nil, sessionIDError(err)
	}
	if p := o.Select.Project; p != "" && len(picked) == 0 && !knownProject(o.ClaudeDir, list, p) {
		// A project that is nowhere is a wrong name, as for the commands
		// on sessions in place; one with no archive chosen is nothing
		// to do.
		return nil, nil, usagef("no project matches %s under %s or in the archives under %s (ccm sessions --archived lists them)",
			p, transcript.ProjectsDir(o.ClaudeDir), root)
	}
	// In the archives' order, as a batch and a bucket's listing have
	// them, whatever the order the ids came in: the sessions are printed
	// in it.
	slices.SortFunc(picked, func(a, b archive.Listed) int { return strings.Compare(a.Path, b.Path) })
	for _, l := range picked {
		it := &unarchiveItem{Session: trimExt(l.Path), Archive: l.Path, file: l.Path}
		if l.Manifest != nil {
			it.Session, it.Project = l.Manifest.Session, l.Manifest.Project
		}
		todo = append(todo, it)
	}
	for _, id := range missing {
		s, err := sessions.Find(o.ClaudeDir, id, nil)
		if err != nil {
			return nil, nil, usagef("no archive of session %s under %s (ccm sessions --archived lists them)", id, root)
		}
		here = append(here, &unarchiveItem{Session: s.ID, Result: "in place"})
	}
	return todo, here, nil
}

// knownProject reports whether --project p names a project: one with an
// archive in list, or a project folder of the config dir.
func knownProject(configDir string, list []archive.Listed, p string) bool {
	for _, l := range list {
		if l.Manifest != nil && sessions.MatchProject(p, l.Manifest.Project, l.Manifest.Folder) {
			return true
		}
	}
	ps, _ := sessions.ListProjects(configDir)
	for _, q := range ps {
		if sessions.MatchProject(p, "", q.Folder) {
			return true
		}
	}
	return false
}

func unarchiveIDs(items []*unarchiveItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Session
	}
	return ids
}

func trimExt(p string) string {
	b := p
	if i := len(b) - len(archive.Ext); i > 0 {
		b = b[:i]
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return b[i+1:]
		}
	}
	return b
}
