package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/hooklib"
	"ccm/internal/ui"
	"ccm/purge"
	"ccm/sessions"
	"ccm/transcript"
)

// purgeOptions are the inputs of ccm purge.
type purgeOptions struct {
	globalOptions
	Select   sessions.Selector
	Purge    purge.Options
	Jobs     int
	Verbose  bool
	Restart  bool
	Analyze  bool
	NoTokens bool
}

func newPurgeCommand() *cli.Command {
	return &cli.Command{
		Name:      "purge",
		Usage:     "shrink and repair transcripts safely (reversible with ccm restore)",
		ArgsUsage: "[FILE|DIR...]",
		Description: `Rewrites each transcript, streaming, so that it resumes smaller and without
API errors:

  thinking      thinking blocks of every assistant message but the latest
                are removed (the latest must stay byte-identical)
  large content tool outputs over --threshold bytes (--old-threshold before
                the recent window), their toolUseResult copies,
                base64 images and large Write/Edit inputs move to the CCM
                store behind a stub (ccm cache get KEY, ccm restore)
  compaction    also stubbed before the recent window, from 1 KB up: Read
                results of files edited or read again later, all but the
                last copy of a repeated tool output, all but the last
                TodoWrite list, and hook context replayed on resume that a
                later hook gave again (--keep-stale-reads,
                --keep-duplicate-outputs, --keep-old-todos,
                --keep-hook-context turn them off)
  bookkeeping   progress records are dropped; of the per-turn
                prompt_snapshot and api-request-* records only the latest
                of each kind stays
  repairs       parentUuids naming missing records are relinked, unanswered
                tool calls get an is_error result, orphan results and empty
                content are removed; children of every removed record are
                relinked so the resume walk stays whole

The recent window is left as it is, but for thinking (kept only in the
latest assistant message, byte for byte) and progress and bookkeeping
records, which go everywhere. It starts at the later of the --recent-turns
Nth-last prompt and the --recent-results Nth-last tool result, and never
after the latest assistant message (its calls and their results stay). The
original is kept as FILE.backup.<stamp>.zst (a zstd copy by default, so a
purge frees disk at once; ccm restore --backup brings it back); lines
Claude Code appends meanwhile are carried over in the order written, and the
file keeps its modification time. A file another process keeps open for
writing (not Claude Code, which opens it per line) is left as it is. A
session named by --current is live: its current turn is left as it is; so
is a file written to in the last 2 minutes that a process holds open for
writing or whose project a Claude Code client runs in (in a batch, or run
from inside Claude Code, or where the system cannot tell, any file written
to in the last 2 minutes). Purging a purged file changes nothing.

Batch: a folder, --all, --project or a narrowing selector purges many
files, --jobs at once; live sessions are skipped unless named. Use
ccm purge --current from inside Claude Code (/purge).

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			dryRunFlag("what it would save; with -v every change, with its line and reason; nothing at all is written"),
			&cli.IntFlag{Name: "threshold", Value: 5000, Usage: "move tool output larger than this many bytes to the store (else $CCM_STUB_THRESHOLD_BYTES, see ccm config)"},
			&cli.IntFlag{Name: "recent-turns", Value: 2, Usage: "the recent window starts no earlier than the Nth-last user prompt (0: only the latest assistant message stays)"},
			&cli.IntFlag{Name: "recent-results", Value: 10, Usage: "...and no earlier than the Nth-last tool result (0: no such bound)"},
			&cli.IntFlag{Name: "old-threshold", Value: 1000, Usage: "before the recent window, move content larger than this many bytes to the store (0: use --threshold)"},
			&cli.BoolFlag{Name: "keep-stale-reads", Usage: "keep Read results of files read again or changed later"},
			&cli.BoolFlag{Name: "keep-duplicate-outputs", Usage: "keep earlier copies of tool outputs repeated byte for byte"},
			&cli.BoolFlag{Name: "keep-old-todos", Usage: "keep TodoWrite lists a later TodoWrite replaced"},
			&cli.BoolFlag{Name: "keep-hook-context", Usage: "keep hook context replayed on resume that a later hook gave again"},
			&cli.IntFlag{Name: "recent-lines", Usage: "accepted for claude-context-manager's scripts: mapped to --recent-turns (10 lines a turn; else $CCM_RECENT_LINES_WINDOW)"},
			&cli.BoolFlag{Name: "keep-thinking", Usage: "keep all thinking blocks"},
			&cli.BoolFlag{Name: "remove-thinking", Usage: "remove old thinking blocks (the default)"},
			&cli.BoolFlag{Name: "keep-progress", Usage: "keep progress records"},
			&cli.BoolFlag{Name: "keep-bookkeeping", Usage: "keep every per-turn bookkeeping record"},
			&cli.BoolFlag{Name: "repair-only", Usage: "only repair the parent chain and tool pairs"},
			&cli.BoolFlag{Name: "no-ccm", Usage: "leave large content in place (it is never truncated)"},
			&cli.StringFlag{Name: "pin-level-default", Value: "none", Usage: "pin level of stubs no ccm:pin directive covers: none, soft or hard (else $CCM_DEFAULT_PIN_LEVEL)"},
			&cli.StringFlag{Name: "backup", Value: string(purge.DefaultBackup), Usage: "how to keep the original: zstd (a compressed copy), link (a hard link: free at once, the whole original later), copy or none"},
			&cli.BoolFlag{Name: "archive-compacted", Usage: "move everything before the last compact boundary into the store"},
			&cli.BoolFlag{Name: "inject-compaction", Usage: "write a compaction pair in front of the last --keep-turns turns"},
			&cli.BoolFlag{Name: "no-inject-compaction", Usage: "do not inject a compaction (the default)"},
			&cli.IntFlag{Name: "keep-turns", Value: 4, Usage: "turns kept after an injected compaction"},
			jobsFlag("batch: files purged at once", "number of CPUs"),
			&cli.BoolFlag{Name: "no-tokens", Usage: "skip the cl100k estimate of the resume context"},
			&cli.BoolFlag{Name: "analyze", Usage: "only analyze (as ccm analyze)"},
			&cli.BoolFlag{Name: "restart", Aliases: []string{"r"}, Usage: "print the command that resumes the purged session"},
			verboseFlag("every step: a dry run's plan, each file of a batch and each it skipped, the counts that are zero"),
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o, err := purgeOptionsFrom(cmd)
			if err != nil {
				return err
			}
			return runPurge(ctx, o)
		},
	}
}

// purgeOptionsFrom checks every flag up front, before any work.
func purgeOptionsFrom(cmd *cli.Command) (purgeOptions, error) {
	g := globals(cmd)
	sel, err := selectorFrom(cmd, false)
	if err != nil {
		return purgeOptions{}, err
	}
	o := purgeOptions{
		globalOptions: g,
		Select:        sel,
		Jobs:          cmd.Int("jobs"),
		Verbose:       cmd.Bool("verbose"),
		Restart:       cmd.Bool("restart"),
		Analyze:       cmd.Bool("analyze"),
		NoTokens:      cmd.Bool("no-tokens"),
	}
	p := purge.DefaultOptions()
	p.DryRun = cmd.Bool("dry-run")
	p.Threshold = cmd.Int("threshold")
	p.RecentTurns = cmd.Int("recent-turns")
	p.RecentResults = cmd.Int("recent-results")
	p.OldThreshold = cmd.Int("old-threshold")
	p.KeepStaleReads = cmd.Bool("keep-stale-reads")
	p.KeepDuplicates = cmd.Bool("keep-duplicate-outputs")
	p.KeepOldTodos = cmd.Bool("keep-old-todos")
	p.KeepHookContext = cmd.Bool("keep-hook-context")
	p.KeepThinking = cmd.Bool("keep-thinking")
	p.KeepProgress = cmd.Bool("keep-progress")
	p.KeepBookkeeping = cmd.Bool("keep-bookkeeping")
	p.RepairOnly = cmd.Bool("repair-only")
	p.NoStore = cmd.Bool("no-ccm")
	p.ArchiveCompacted = cmd.Bool("archive-compacted")
	p.InjectCompaction = cmd.Bool("inject-compaction")
	p.KeepTurns = cmd.Int("keep-turns")
	p.Live = sel.Current
	p.InferLive = true
	switch {
	case p.Threshold < 1:
		return o, usagef("--threshold must be a positive number of bytes")
	case p.RecentTurns < 0:
		return o, usagef("--recent-turns must be 0 or more")
	case p.RecentResults < 0:
		return o, usagef("--recent-results must be 0 or more")
	case p.OldThreshold < 0:
		return o, usagef("--old-threshold must be 0 or a positive number of bytes")
	case p.KeepTurns < 1:
		return o, usagef("--keep-turns must be 1 or more")
	case o.Jobs < 0:
		return o, usagef("--jobs must be 1 or more")
	case p.KeepThinking && cmd.Bool("remove-thinking"):
		return o, usagef("--keep-thinking and --remove-thinking contradict each other")
	case p.InjectCompaction && cmd.Bool("no-inject-compaction"):
		return o, usagef("--inject-compaction and --no-inject-compaction contradict each other")
	}
	// claude-context-manager's settings (environment, config.env, its config.py)
	// stand in for flags that were not given.
	cfg := hooklib.LoadConfig(g.ClaudeDir, os.LookupEnv)
	if !cmd.IsSet("threshold") && cfg.Lookup("CCM_STUB_THRESHOLD_BYTES").IsSet() {
		if p.Threshold = cfg.Int("CCM_STUB_THRESHOLD_BYTES"); p.Threshold < 1 {
			return o, usagef("CCM_STUB_THRESHOLD_BYTES (%s) must be a positive number of bytes", cfg.Lookup("CCM_STUB_THRESHOLD_BYTES").Source)
		}
	}
	if cmd.IsSet("recent-lines") {
		n := cmd.Int("recent-lines")
		if n < 0 {
			return o, usagef("--recent-lines must be 0 or more")
		}
		if cmd.IsSet("recent-turns") {
			return o, usagef("give --recent-turns or --recent-lines, not both")
		}
		p.RecentTurns = (n + 9) / 10
		fmt.Fprintf(g.Stderr, "ccm: note: --recent-lines %d is read as --recent-turns %d (ccm keeps whole turns: most lines of recent transcripts are progress records)\n", n, p.RecentTurns)
	} else if !cmd.IsSet("recent-turns") && cfg.Lookup("CCM_RECENT_LINES_WINDOW").IsSet() {
		if n := cfg.Number("CCM_RECENT_LINES_WINDOW"); n >= 0 {
			p.RecentTurns = (int(n) + 9) / 10
		}
	}
	pinDefault := cmd.String("pin-level-default")
	if !cmd.IsSet("pin-level-default") {
		pinDefault = cfg.PinDefault("")
	}
	lvl, err := ccm.ParsePinLevel(pinDefault)
	if err != nil {
		return o, usagef("--pin-level-default: %v", err)
	}
	p.PinDefault = lvl
	switch b := purge.BackupMode(cmd.String("backup")); b {
	case purge.BackupLink, purge.BackupCopy, purge.BackupZstd, purge.BackupNone:
		p.Backup = b
	default:
		return o, usagef("--backup must be link, copy, zstd or none, not %q", b)
	}
	o.Purge = p
	return o, nil
}

// ccmHome is where ccm keeps its own state (sessions.Home).
func ccmHome(g globalOptions) string { return sessions.Home(g.ClaudeDir) }

// storeRoot is the CCM store's directory (sessions.StoreDir).
func storeRoot(g globalOptions) string { return sessions.StoreDir(g.ClaudeDir, g.CacheDir) }

func runPurge(ctx context.Context, o purgeOptions) error {
	noteFallbacks(o.Stderr, o.Verbose)
	if o.Analyze {
		return runAnalyze(ctx, analyzeOptions{globalOptions: o.globalOptions, Select: o.Select, Top: 10})
	}
	sel, err := selectSessions(ctx, o.globalOptions, o.Select, sessions.SelectOptions{})
	if err != nil {
		return err
	}
	// Files a walk, --all or a narrowing selector chose: a batch, which
	// carries on past a file it cannot purge and skips live ones.
	isBatch := isBatch(sel)
	files := sel.Todo
	// A selection that chose nothing creates no store.
	if len(files) > 0 && !o.Purge.DryRun && !o.Purge.NoStore && !o.Purge.RepairOnly {
		st, err := ccm.Open(storeRoot(o.globalOptions))
		if err != nil {
			return err
		}
		o.Purge.Store = st
	}
	o.Purge.LockDir = filepath.Join(ccmHome(o.globalOptions), "locks")
	// Token estimates cost a tokenizer start and up to a second per file:
	// on by default for single files, off for batches.
	o.Purge.Tokens = !o.NoTokens && !isBatch
	if isBatch {
		return runPurgeBatch(ctx, o, sel)
	}
	boundMemory(purgeMemoryLimitFor(largestFile(files), o.Purge.Store != nil))
	var failed error
	var reports []*purge.Report
	for _, f := range files {
		opt := o.Purge
		// A file the user names is live only when something writes to it:
		// a fresh copy or checkout has a new mtime and no writer.
		// Run from inside Claude Code (CLAUDECODE is set for its tools),
		// the file may be that session's own: the mtime rule stays.
		opt.LiveNeedsWriter = f.Named && !o.Select.Current && os.Getenv("CLAUDECODE") == ""
		rep, err := purge.File(ctx, f.Path, opt)
		if err != nil {
			failed = purgeError(f.Path, err)
			if len(files) == 1 {
				return failed
			}
			fmt.Fprintf(o.Stderr, "ccm: %v\n", failed)
			continue
		}
		reports = append(reports, rep)
		if !o.JSON {
			printPurgeReport(o.Stdout, rep, o.Verbose, false)
			if o.Restart {
				printRestart(o.Stdout, f.Path)
			}
		}
	}
	notePurged(ctx, o, reports)
	if o.JSON {
		if err := writeJSON(o.Stdout, reports); err != nil {
			return err
		}
	}
	if failed != nil {
		return silentError{code: exitFindings}
	}
	return nil
}

// notePurged keeps the reference index current with the transcripts a
// purge rewrote, so that prune does not read them again. The backups are
// left to prune: reading a compressed one means decompressing it, which
// cost a purge of a 200 MB transcript almost as much CPU time as the
// purge itself; a backup outside projects/ is recorded as a root, read by
// the next prune.
func notePurged(ctx context.Context, o purgeOptions, reports []*purge.Report) {
	if o.Purge.DryRun {
		return
	}
	var paths []string
	for _, r := range reports {
		if r.Changed {
			paths = append(paths, r.Path)
		}
	}
	noteTranscripts(ctx, o.globalOptions, paths...)
	recordOutside(ctx, o.globalOptions, purgeBackups(reports)...)
}

func purgeBackups(reports []*purge.Report) []string {
	var out []string
	for _, r := range reports {
		if r.Backup != "" {
			out = append(out, r.Backup)
		}
	}
	return out
}

// Soft memory limits of the Go runtime for the commands that count tokens.
// Tokenizing allocates about 180 bytes per byte of text, on top of a live
// heap of 25 MB for the tokenizer's tables (and, in a purge, content on its
// way into the store): with the default GC pacing a purge of the 200 MB
// benchmark grew to 125 MB of RSS and an analyze to 70 MB. A limit makes
// the collector run before that, for a few percent of CPU. A purge's
// limit grows with the transcript (purgeMemoryLimitFor). $GOMEMLIMIT, when
// set, wins.
const (
	purgeMemoryLimit   = 72 << 20
	analyzeMemoryLimit = 40 << 20
)

// boundMemory sets the runtime's soft memory limit unless the user set
// $GOMEMLIMIT.
func boundMemory(limit int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

// purgeError words a purge failure for one file.
func purgeError(path string, err error) error {
	switch {
	case errors.Is(err, purge.ErrLocked), errors.Is(err, ccm.ErrLocked):
		return fmt.Errorf("%s: %w: %w", path, errLocked, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	return fileError(path, err)
}

// printRestart tells how to resume the purged session: the running Claude
// Code keeps its history in memory until it is resumed from the file.
func printRestart(w io.Writer, path string) {
	cmd := "claude --resume " + strings.TrimSuffix(filepath.Base(path), ".jsonl")
	// Claude Code looks for the session under the directory it starts
	// in; from anywhere else it answers "No conversation found".
	if dir := transcript.SessionCwd(path); dir != "" {
		if wd, err := os.Getwd(); err != nil || filepath.Clean(wd) != filepath.Clean(dir) {
			cmd = "cd " + ui.ShellQuote(dir) + " && " + cmd
		}
	}
	fmt.Fprintf(w, "\nto continue with the purged transcript, leave this Claude Code session (/exit) and run:\n  %s\n", cmd)
	fmt.Fprintf(w, "the running session keeps its full history in memory until then; ccm never stops it for you.\n")
}
