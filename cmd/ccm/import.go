package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/objstore"
	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/sessions/bundle"
	"ccm/sessions/remote"
	"ccm/transcript"
)

type importOptions struct {
	globalOptions
	Args       []string // bundle files, or an s3:// URL and session ids
	Cwd        string
	NewID      bool
	KeepMTimes bool
	DryRun     bool
	Verbose    bool // each session's plan after the summary
	Endpoint   string
	Jobs       int
	Now        time.Time
	// AllowMissingContent imports bundles whose stored content is missing
	// or corrupt (their files intact): those stubs stay stubs.
	AllowMissingContent bool
}

func newImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "put an exported session where claude --resume finds it, on this machine and at PATH",
		ArgsUsage: "BUNDLE... | s3://BUCKET/PREFIX ID... | s3://BUCKET/PREFIX/MACHINE/FOLDER/ID.SHA.tar.zst",
		Description: `Reads a bundle (from ccm export, or an archive from ccm archive), checks every
file against its manifest and that it names nothing outside its session,
then puts the session where Claude Code finds it when started in PATH
(--cwd; default: the session's own project path, which must exist here):
the project folder named after PATH as Claude Code names it, every record's
cwd (and the fields the client locates a project by: a relocation's cwd, a
worktree's paths) moved from the old project path to PATH, Windows paths
included; the conversation itself is not changed. The stubs' content goes
into the CCM store, the transcript into its folder last. It ends with the
command that resumes the session.

A session id that exists in the config dir is refused unless --new-id,
which gives the import a new id everywhere the client reads it (every
record's sessionId, the transcript, its folder, file-history, todos).
--cwd must be an existing directory (a relative one is taken from the
current directory; symbolic links are resolved, as the client sees the
physical path). The files get the current time (an old session would be
deleted by Claude Code's sweep at its next start); --keep-mtimes keeps the
archived ones.

An s3:// URL with session ids (whole, or a prefix of 4 characters or more
that starts no other) finds each among every machine's bundles and
archives under the prefix (the newest, when several machines have it);
one object's URL (as ccm sessions --archived --from lists it) imports that
object.

The summary comes first, then the command that resumes each session; with
-v each session's plan follows: its project path old and new, its folder,
its new id, the records moved, the files and the stubs' content.

A bundle is read as ccm unarchive reads an archive: every member against
its SHA-256, nothing outside the session's own paths, the stored content
into the store (durable) before any file goes into place. A bundle whose
files are intact but whose stored content is missing or corrupt is refused
unless --allow-missing-content, which names the stubs that stay stubs.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cwd", Usage: "the project directory on this machine (`PATH`)"},
			&cli.BoolFlag{Name: "new-id", Usage: "give the imported session a new id"},
			&cli.BoolFlag{Name: "keep-mtimes", Usage: "keep the files' archived modification times"},
			&cli.BoolFlag{Name: "allow-missing-content", Usage: "import even if the bundle's stored content is missing or corrupt (its stubs stay stubs)"},
			dryRunFlag("each bundle is read and checked whole, and what is in the way named"),
			verboseFlag("each session's plan: project, folder, id, records, files and stored content"),
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			jobsFlag("bundles imported at once", "number of CPUs"),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runImport(ctx, importOptions{globalOptions: globals(cmd), Args: cmd.Args().Slice(), Cwd: cmd.String("cwd"),
				NewID: cmd.Bool("new-id"), KeepMTimes: cmd.Bool("keep-mtimes"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Endpoint: cmd.String("endpoint"),
				Jobs: int(cmd.Int("jobs")), AllowMissingContent: cmd.Bool("allow-missing-content")})
		},
	}
}

func runImport(ctx context.Context, o importOptions) error {
	if len(o.Args) == 0 {
		return usagef("give a bundle, or s3://BUCKET/PREFIX and session ids (see ccm import --help)")
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	root := ""
	if o.Cwd != "" {
		var err error
		if root, err = bundle.CheckRoot(o.Cwd); err != nil {
			return usagef("%v", err)
		}
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	if !o.DryRun {
		// Not two imports (nor an archive, unarchive or clean) at once:
		// each checks what is in the config dir before it writes.
		if _, err := sessions.ListProjects(o.ClaudeDir); err != nil {
			return err
		}
		lk, err := maintenanceLock(ctx, o.globalOptions)
		if err != nil {
			return err
		}
		defer lk.Unlock()
	}
	bundles, names := o.Args, o.Args
	if isRemote(o.Args[0]) {
		var stage string
		var done func()
		var err error
		if o.DryRun {
			stage, done, err = dryStage("import-")
		} else {
			stage, done, err = stageDir(ctx, o.globalOptions, "", "import-")
		}
		if err != nil {
			return err
		}
		defer done()
		if bundles, names, err = fetchRemote(ctx, o.globalOptions, o.Endpoint, o.Args, stage); err != nil {
			return err
		}
	}
	// Bundles are read and written a few at once (each is CPU and then
	// fsync waits); the check of the places and the renames one at a time.
	results := make([]*bundle.Plan, len(bundles))
	errs := make([]error, len(bundles))
	var placing sync.Mutex
	taken, err := bundle.ListTaken(o.ClaudeDir)
	if err != nil {
		return err
	}
	forEach(ctx, o.Stderr, o.JSON, "importing", len(bundles), o.Jobs, func(i int) {
		iopt := bundle.ImportOptions{ConfigDir: o.ClaudeDir, Store: st, Root: root, KeepMTimes: o.KeepMTimes, DryRun: o.DryRun,
			AllowMissingContent: o.AllowMissingContent, Now: o.Now, Placing: &placing, Taken: taken}
		if o.NewID {
			iopt.NewID = newSessionID()
		}
		results[i], errs[i] = bundle.Import(ctx, bundles[i], iopt)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(bundles) == 1 && errs[0] != nil {
		return importError(errs[0], o.AllowMissingContent)
	}
	plans := []*bundle.Plan{}
	failed := newItemErrors(o.globalOptions)
	var transcripts []string
	for i, p := range results {
		if errs[i] != nil {
			failed.add(importError(errs[i], o.AllowMissingContent))
			continue
		}
		p.Bundle = names[i]
		plans = append(plans, p)
		transcripts = append(transcripts, p.Transcripts...)
	}
	// The reference index learns of the new transcripts, so that prune
	// reads what they reference without walking the config dir.
	noteRefs(ctx, o.globalOptions, transcript.ProjectsDir(o.ClaudeDir), transcripts...)
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"dry_run": o.DryRun, "sessions": plans, "failed": failed.count(), "errors": failed.strings()}); err != nil {
			return err
		}
	} else {
		printImports(o, plans, failed.count())
	}
	return failed.status()
}

// importError adds to a refusal of damaged content the flag that imports
// the session without it.
func importError(err error, allowed bool) error {
	if errors.Is(err, archive.ErrCorrupt) && !errors.Is(err, archive.ErrForeign) && !allowed {
		return fmt.Errorf("%w (when only its stored content is damaged, --allow-missing-content imports the session without it)", err)
	}
	return err
}

// printImports prints the summary, the command that resumes each
// session, its warnings, and with -v each session's plan.
func printImports(o importOptions, plans []*bundle.Plan, failed int) {
	w := o.Stdout
	files := 0
	var bytes int64
	for _, p := range plans {
		files += p.Files
		bytes += p.Bytes
	}
	verb := "imported"
	if o.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(w, "import: %s %d of %d sessions, %s files, %s (%d failed)\n", verb, len(plans), len(plans)+failed, ui.Count(files), ui.Bytes(bytes), failed)
	for _, p := range plans {
		id := p.Session
		if p.NewID != "" {
			id = p.NewID
		}
		for _, warn := range p.Warnings {
			fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s\n", id, warn)
		}
		switch {
		case len(p.StaysStub) == 0:
		case len(p.BadContent) > 0:
			fmt.Fprintf(o.Stderr, "ccm: warning: %s: %d stubs stay stubs, their content is missing or corrupt in the bundle and not in the store: %s\n",
				id, len(p.StaysStub), strings.Join(p.StaysStub, ", "))
		default:
			fmt.Fprintf(o.Stderr, "ccm: warning: %s: the content of %d stubs is in neither the bundle nor the store: they stay stubs\n", id, len(p.StaysStub))
		}
		if o.Verbose {
			printImportPlan(o, p)
		}
		fmt.Fprintf(w, "resume: %s\n", p.Resume)
	}
}

// printImportPlan prints what one import does (or would do).
func printImportPlan(o importOptions, p *bundle.Plan) {
	w := o.Stdout
	from := ""
	if p.Machine != "" {
		from = " (exported on " + p.Machine + ")"
	}
	fmt.Fprintf(w, "%s from %s%s\n", p.Session, p.Bundle, from)
	if p.OldRoot != p.NewRoot {
		fmt.Fprintf(w, "  project   %s -> %s\n", p.OldRoot, p.NewRoot)
	} else {
		fmt.Fprintf(w, "  project   %s\n", p.NewRoot)
	}
	fmt.Fprintf(w, "  folder    %s\n", p.Folder)
	if p.NewID != "" {
		fmt.Fprintf(w, "  new id    %s (%d records' sessionId)\n", p.NewID, p.Renumbered)
	}
	fmt.Fprintf(w, "  records   %s with their cwd moved; the conversation unchanged\n", ui.Count(p.Located))
	fmt.Fprintf(w, "  files     %s, %s", ui.Count(p.Files), ui.Bytes(p.Bytes))
	if p.Unchanged > 0 {
		fmt.Fprintf(w, " (%d there already, identical)", p.Unchanged)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  stubs     the content of %d (%d new to the store)\n", p.Content, p.ContentNew)
	if len(p.Redacted) > 0 {
		fmt.Fprintf(w, "  redacted  %s\n", strings.Join(p.Redacted, ", "))
	}
}

// fetchRemote downloads the bundles an s3:// argument list names into
// stage: one object (…/ID.SHA.tar.zst), that one and no other machine's
// archive of the session, or session ids looked up among every machine's
// archives under the prefix (the newest of each). It returns the local
// files and their URLs.
func fetchRemote(ctx context.Context, g globalOptions, endpoint string, args []string, stage string) (files, urls []string, err error) {
	url, ids := args[0], args[1:]
	for _, a := range ids {
		if isRemote(a) {
			return nil, nil, usagef("give one s3:// URL, then session ids")
		}
	}
	object := ""
	if strings.HasSuffix(url, archive.Ext) {
		if len(ids) > 0 {
			return nil, nil, usagef("%s names one bundle: give no session ids with it", url)
		}
		parts := strings.Split(strings.TrimSuffix(url, archive.Ext), "/")
		if len(parts) < 6 { // s3: "" bucket machine folder id
			return nil, nil, usagef("%s: want s3://BUCKET/PREFIX/MACHINE/FOLDER/SESSION.SHA.tar.zst", url)
		}
		loc, err := objstore.ParseURL(url)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		object = loc.URL()
		id, _, _ := strings.Cut(parts[len(parts)-1], ".")
		ids = []string{id}
		url = strings.Join(parts[:len(parts)-3], "/")
	}
	if len(ids) == 0 {
		return nil, nil, usagef("give the ids of the sessions to import from %s", url)
	}
	t, picked, err := listRemote(ctx, g, url, endpoint, ids, sessions.Selector{}, time.Now(), object != "")
	if err != nil {
		return nil, nil, err
	}
	defer t.Close()
	if object != "" {
		picked = slices.DeleteFunc(picked, func(l remote.Listed) bool { return l.URL != object })
		if len(picked) == 0 {
			return nil, nil, usagef("%s: no complete bundle there (ccm sessions --archived --from %s lists them)", object, url)
		}
	}
	for _, l := range picked {
		if err := bundle.CheckFormat(l.URL, l.Manifest); err != nil {
			return nil, nil, err // before anything is downloaded
		}
	}
	files, urls = make([]string, len(picked)), make([]string, len(picked))
	for i, l := range picked {
		files[i] = archive.ArchivePath(filepath.Join(stage, strconv.Itoa(i)), l.Manifest.Folder, l.Manifest.Session)
		urls[i] = l.URL
	}
	for _, err := range t.FetchAll(ctx, picked, func(i int) string { return files[i] }) {
		if err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return files, urls, nil
}
