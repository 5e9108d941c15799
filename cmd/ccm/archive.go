package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/sessions/archive"
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
			jobsFlag("sessions archived at once", "number of CPUs"),
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
	// Unfinished are this machine's archive objects in object storage
	// that no manifest had named for a day (remote.Orphans), removed (or,
	// in a dry run, to be).
	Unfinished      []string `json:"unfinished_uploads,omitempty"`
	UnfinishedBytes int64    `json:"unfinished_bytes,omitempty"`
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
		if n := len(sum.Unfinished); n > 0 {
			verb := "removed"
			if sum.DryRun {
				verb = "would remove"
			}
			fmt.Fprintf(o.Stdout, "archive: %s %s unfinished uploads of this machine, %s (archive objects no manifest named for a day)\n",
				verb, ui.Count(n), ui.Bytes(sum.UnfinishedBytes))
			if o.Verbose {
				for _, u := range sum.Unfinished {
					fmt.Fprintf(o.Stdout, "  %s\n", u)
				}
			}
		}
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
