package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/search"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

type archiveOptions struct {
	globalOptions
	// Select chooses the sessions; without --older-than the policy's age
	// is the default below cleanupPeriodDays, except for sessions named
	// (FILE, --current, --session), which have none.
	Select   sessions.Selector
	To       string // a folder, or s3://BUCKET/PREFIX
	Endpoint string
	DryRun   bool
	Verbose  bool // kept sessions in the plan too, and the plan printed after the summary
	Jobs     int
	Quiet    bool // maintain: no progress bar, no warnings of its own
	HaveLock bool // maintain holds the maintenance lock already
	Now      time.Time
	Failed   *itemErrors    // maintain's, shared by its parts; nil: the run's own
	remote   *remoteArchive // --to s3://...
}

func newArchiveCommand() *cli.Command {
	return &cli.Command{
		Name:  "archive",
		Usage: "move old sessions into compressed, verified archives",
		Description: `Moves whole sessions (the transcript, its subagents/ and tool-results/
folders, legacy agent files, purge backups, its file-history and todos) into
one zstd-compressed tar archive per session, <ccm home>/archive/<project
folder>/<session>.tar.zst (or under --to DIR), with a manifest of every
file's mode, mtime, size and SHA-256 beside it. The archive also carries the
CCM store content its stubs stand for, so it needs no store. Each archive is
read back, compared by hash and fsynced before the originals are removed. A
live session (written in the last 2 minutes or open for writing) is never
touched, and a session written to while it is archived stays where it is
(reported). A session unarchive brought back counts its age from then. An
archive or unarchive that was killed is finished or undone first.

The summary comes first, then with -v the plan, a reason per session. Without a selector every
session is considered. The default --older-than stays below Claude Code's
cleanupPeriodDays (30 days unless the settings say otherwise): a week
before it, or half of it for periods under two weeks;
CCM_ARCHIVE_OLDER_THAN_DAYS overrides it. A session named (FILE, --current,
--session) has no default age: it is archived unless it is live.

--to s3://BUCKET/PREFIX archives into S3-compatible object storage instead,
under PREFIX/<machine>/ (docs/remote.md): each archive carries its stubs'
content, and is uploaded and confirmed by the server, manifest last, before
the originals are removed.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.StringFlag{Name: "to", Usage: "archive folder (default <ccm home>/archive), or s3://BUCKET/PREFIX"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			dryRunFlag(""),
			verboseFlag("the plan: every session archived, and every session kept, each with why"),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "sessions archived at once (default: number of CPUs)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, true)
			if err != nil {
				return err
			}
			o := archiveOptions{globalOptions: globals(cmd), Select: sel, To: cmd.String("to"), Endpoint: cmd.String("endpoint"),
				DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Jobs: int(cmd.Int("jobs"))}
			return runArchive(ctx, o)
		},
	}
}

// archivePlanItem is one session's decision.
type archivePlanItem struct {
	Project string `json:"project"`
	Session string `json:"session"`
	Bytes   int64  `json:"bytes"`
	Archive bool   `json:"archive"`
	Reason  string `json:"reason"`
	// Outcome, after a real run.
	Result string `json:"result,omitempty"` // archived, left (live write), failed
	Error  string `json:"error,omitempty"`
	Path   string `json:"archive_path,omitempty"`
	Packed int64  `json:"archive_bytes,omitempty"`
	row    *sessions.Row
}

// archiveSummary is the JSON form of a run.
type archiveSummary struct {
	DryRun     bool               `json:"dry_run"`
	OlderThan  string             `json:"older_than"`
	Root       string             `json:"archive_root"`
	Planned    int                `json:"planned"`
	Archived   int                `json:"archived"`
	LeftLive   int                `json:"left_in_place"`
	Failed     int                `json:"failed"`
	Bytes      int64              `json:"bytes"`
	Packed     int64              `json:"archive_bytes"`
	Items      []*archivePlanItem `json:"sessions"`
	ScanErrors []string           `json:"scan_errors"`
	// Recovered are interrupted archives and unarchives of earlier runs,
	// finished or undone first.
	Recovered []archive.Recovered `json:"recovered,omitempty"`
	// NoContent counts the stubs archived without their content (the
	// store did not have it): they stay stubs.
	NoContent int `json:"stubs_without_content,omitempty"`
}

// maintenanceLock keeps two batch runs (archive, unarchive, clean,
// maintain) from overlapping; each transcript also gets purge's lock.
func maintenanceLock(ctx context.Context, g globalOptions) (*fsutil.Lock, error) {
	lk, err := fsutil.LockFile(ctx, filepath.Join(ccmHome(g), "locks", "maintain.lock"), true, 0)
	if errors.Is(err, fsutil.ErrLockTimeout) {
		return nil, fmt.Errorf("%w: another ccm archive, clean or maintain is running (%v)", errLocked, err)
	}
	return lk, err
}

func runArchive(ctx context.Context, o archiveOptions) error {
	noteFallbacks(o.Stderr, o.Verbose)
	sum, err := archiveSessions(ctx, o)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.Stdout, archiveSummaryLine(sum))
		if o.Verbose {
			if err := printArchivePlan(o.globalOptions, sum); err != nil {
				return err
			}
		}
	}
	if sum.Failed > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}

// printArchivePlan prints archive's plan after its summary: each session
// archived (or to be, or left in place, or failed) and, as -v collected
// them, each session kept, with why.
func printArchivePlan(g globalOptions, s *archiveSummary) error {
	t := ui.NewTable(ui.Col{}, ui.Col{}, ui.Col{Right: true}, ui.Col{Shrink: true, Min: 16}, ui.Col{Shrink: true, Min: 20})
	// The sessions archived first, then those kept.
	items := slices.Clone(s.Items)
	slices.SortStableFunc(items, func(a, b *archivePlanItem) int {
		switch {
		case a.Archive == b.Archive:
			return 0
		case a.Archive:
			return -1
		}
		return 1
	})
	for _, it := range items {
		action, why := "keep", it.Reason
		switch {
		case !it.Archive:
		case it.Result == "":
			action = "archive"
		default:
			action = it.Result
		}
		if it.Error != "" && it.Archive {
			why += ": " + it.Error
		}
		t.Add(action, shortID(g, it.Session), ui.Bytes(it.Bytes), shortHome(it.Project), why)
	}
	return writeTable(g, t)
}

func archiveSummaryLine(s *archiveSummary) string {
	if s.DryRun {
		line := fmt.Sprintf("archive: would archive %s sessions, %s, into %s", ui.Count(s.Planned), ui.Bytes(s.Bytes), s.Root)
		if s.Failed > 0 {
			line += fmt.Sprintf(" (%s could not be read)", ui.Count(s.Failed))
		}
		return line
	}
	return fmt.Sprintf("archive: archived %s of %s sessions, %s into %s (%s left in place: written to meanwhile, %s failed)",
		ui.Count(s.Archived), ui.Count(s.Planned), ui.Bytes(s.Bytes), ui.Bytes(s.Packed), ui.Count(s.LeftLive), ui.Count(s.Failed))
}

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
		url := ""
		if o.remote != nil {
			if url, err = o.remote.upload(ctx, p); err != nil {
				p.Discard()
				lk.Unlock()
				record(it, nil, err)
				return
			}
		}
		packed <- &packedItem{it: it, p: p, lock: lk, url: url}
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
// archived, so that no search has to read their archives; only when ccm
// search made an index, and only for archives where searches look for
// them (not --to elsewhere). A part it could not write is a warning, not
// a failed session: the archive stands, and the next search reads that
// archive once to write the part.
func indexArchived(ctx context.Context, o archiveOptions, root string, todo []*archivePlanItem) {
	home := ccmHome(o.globalOptions)
	if !search.Exists(home) || filepath.Clean(root) != filepath.Clean(archiveRoot(o.globalOptions, "")) {
		return
	}
	var paths []string
	for _, it := range todo {
		if it.Result == "archived" {
			paths = append(paths, it.Path)
		}
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

// packedItem is a packed session waiting for its batch's finish, still
// holding its transcript's lock.
type packedItem struct {
	it   *archivePlanItem
	p    *archive.Packed
	lock *fsutil.Lock
	url  string // the uploaded archive, with --to s3://...
}

// finishBatch finishes packed sessions and releases their locks. After
// an interrupt it discards their archives instead: the originals were
// never touched.
func finishBatch(ctx context.Context, batch []*packedItem, record func(*archivePlanItem, *archive.Result, error), ra *remoteArchive) {
	if len(batch) == 0 {
		return
	}
	ps := make([]*archive.Packed, len(batch))
	for i, pi := range batch {
		ps[i] = pi.p
	}
	var errs []error
	if err := ctx.Err(); err != nil {
		errs = make([]error, len(batch))
		for i, p := range ps {
			p.Discard()
			p.Archive = ""
			errs[i] = err
		}
	} else {
		errs = archive.Finish(ps, nil)
	}
	ra.settle(ctx, batch)
	for i, pi := range batch {
		pi.lock.Unlock()
		record(pi.it, &pi.p.Result, errs[i])
	}
}

// packOne packs one session under its transcript's lock, which it
// returns held: the lock is released after the session's batch finishes.
func packOne(ctx context.Context, o archiveOptions, r *sessions.Row, root, lockDir string, todos sessions.Todos, st *ccm.Store) (*archive.Packed, *fsutil.Lock, error) {
	lk, err := fsutil.LockFile(ctx, rewrite.LockPath(lockDir, r.Path), true, 0)
	if err != nil {
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, nil, fmt.Errorf("%w: a purge is rewriting it", errLocked)
		}
		return nil, nil, err
	}
	related, relDirs, errs := sessions.RelatedIn(o.ClaudeDir, r.ID, todos)
	if len(errs) > 0 {
		lk.Unlock()
		return nil, nil, errs[0]
	}
	src := archive.Source{ConfigDir: o.ClaudeDir, Session: r.Session, Related: related, RelDirs: relDirs,
		Project: r.Project, Title: r.Title, Prompt: r.Prompt, Records: r.Records, Context: r.Context}
	p, err := archive.Pack(ctx, src, archive.Options{Root: root, Level: archiveLevel, Now: o.Now, Store: st})
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	return p, lk, nil
}

// archiveLevel is zstd's fastest level. Archiving is bound by the
// compressor's CPU time (Go's encoder is slower than the C zstd that
// `tar --zstd` runs): on generated transcripts the fastest level packs
// about 30% faster than the default level (zstd -3's equivalent), for
// archives about 10% larger (4.1x instead of 4.5x smaller than the
// transcripts).
var archiveLevel = zstd.SpeedFastest

// wholeSessionsOnly refuses a transcript named on the command line that
// is not a session of the config dir (a subagent transcript, a file
// elsewhere): archive and export (verb) work on whole sessions. Ones a
// walk found are left out quietly.
func wholeSessionsOnly(g globalOptions, verb string, sel *sessions.Selection) error {
	keep := sel.Todo[:0]
	for _, t := range sel.Todo {
		switch {
		case t.Session != nil:
			keep = append(keep, t)
		case t.Named:
			return usagef("%s: not a session of %s (%s works on whole sessions)", t.Path, transcript.ProjectsDir(g.ClaudeDir), verb)
		}
	}
	sel.Todo = keep
	skipped := sel.Skipped[:0]
	for _, k := range sel.Skipped {
		if k.Session != nil {
			skipped = append(skipped, k)
		}
	}
	sel.Skipped = skipped
	return nil
}
