package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
	"ccm/prune"
	"ccm/search"
	"ccm/sessions"
	"ccm/sessions/clean"
)

type maintainOptions struct {
	globalOptions
	DryRun   bool
	Verbose  bool // each part's plan after the summary
	Jobs     int
	LockWait time.Duration // for the store's lock
	Now      time.Time
}

func newMaintainCommand() *cli.Command {
	return &cli.Command{
		Name:  "maintain",
		Usage: "for cron: archive old sessions, clean, prune the store, by the configured policy",
		Description: `Runs, in this order and under one lock: ccm archive (sessions older than
CCM_ARCHIVE_OLDER_THAN_DAYS, by default a week before Claude Code's
cleanupPeriodDays; into object storage when CCM_ARCHIVE_TO is
s3://BUCKET/PREFIX), ccm clean (purge backups older than
CCM_CLEAN_BACKUPS_OLDER_THAN_DAYS, beyond CCM_CLEAN_KEEP_BACKUPS, temp files,
orphaned folders, and with CCM_CLEAN_EMPTY empty sessions), then ccm prune of
the CCM store (CCM_PRUNE_MAX_AGE_DAYS, CCM_PRUNE_MAX_SIZE_MB), and last brings
the search index up to date when ccm search made one. Values come from the
environment, then <ccm home>/config.env (ccm config lists them).

Prune never deletes content that a transcript, a purge backup or an archive
references (ccm prune --help): when that content alone keeps the store over
CCM_PRUNE_MAX_SIZE_MB, the summary says how much, and the ccm prune command
that would evict it, and maintain still exits 0.

Prints nothing when there was nothing to do, else one summary line (-v: then
the plan of each part, every item with why, what is kept too). Exits
non-zero only on a real failure; a store locked by another ccm for longer
than --lock-wait is one (exit 4), after the summary of what was done.

` + exitStatusHelp,
		Flags: []cli.Flag{
			dryRunFlag(""),
			verboseFlag("the plan of each part: sessions archived and kept, files removed and kept, blobs pruned, each with why"),
			jobsFlag("sessions worked on at once", "number of CPUs"),
			lockWaitFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("maintain takes no arguments (see ccm maintain --help)")
			}
			wait, err := parseDuration("lock-wait", cmd.String("lock-wait"))
			if err != nil {
				return err
			}
			return runMaintain(ctx, maintainOptions{globalOptions: globals(cmd), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Jobs: int(cmd.Int("jobs")),
				LockWait: wait})
		},
	}
}

type maintainSummary struct {
	Archive *archiveSummary `json:"archive,omitempty"`
	Clean   *cleanSummary   `json:"clean,omitempty"`
	Prune   *pruneOutcome   `json:"prune,omitempty"`
	// Search is what bringing the search index up to date did (only when
	// ccm search made one: maintain never creates it).
	Search *search.UpdateStats `json:"search,omitempty"`
	Errors []string            `json:"errors"`
}

type pruneOutcome struct {
	Skipped string `json:"skipped,omitempty"`
	Deleted int    `json:"deleted"`
	Freed   int64  `json:"freed"`
	Failed  int    `json:"failed"`
	// OverLimit says what keeps the store over its size limit (referenced
	// content, and the command that would evict it), "" when nothing.
	OverLimit string `json:"over_limit,omitempty"`
	plan      []byte // the plan's lines, for -v
}

func runMaintain(ctx context.Context, o maintainOptions) error {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	cfg := maintainConfig(o.globalOptions)
	cfg.Validate()
	for _, w := range cfg.Warnings {
		fmt.Fprintf(o.Stderr, "ccm: warning: %s\n", w)
	}
	var lockErr error
	if !o.DryRun {
		lk, err := maintenanceLock(ctx, o.globalOptions)
		if err != nil {
			return err
		}
		defer lk.Unlock()
	}
	sum := &maintainSummary{Errors: []string{}}
	failed := newItemErrors(o.globalOptions) // one rule and one count for all three parts
	quiet := o.globalOptions
	if cfg.Bool("CCM_MAINTAIN_ARCHIVE") {
		ao := archiveOptions{globalOptions: quiet, Select: sessions.Selector{All: true}, DryRun: o.DryRun, Verbose: o.Verbose, Jobs: o.Jobs, Quiet: true, HaveLock: true, Now: o.Now, Failed: failed}
		if to := cfg.String("CCM_ARCHIVE_TO"); to != "" {
			if !isRemote(to) {
				return usagef("CCM_ARCHIVE_TO=%s: want s3://BUCKET/PREFIX (CCM_ARCHIVE_DIR names a folder)", to)
			}
			ao.To = to
		}
		if mb := cfg.Number("CCM_ARCHIVE_MIN_SIZE_MB"); mb > 0 {
			ao.Select.MinSize = int64(mb * prune.MiB)
		}
		s, err := archiveSessions(ctx, ao)
		if err != nil {
			return err
		}
		sum.Archive = s
	} else if _, err := sessions.ListProjects(o.ClaudeDir); err == nil && !o.DryRun {
		// Not archiving, but an interrupted archive or unarchive is still
		// finished or undone (archiveSessions does it when it runs).
		st, err := openStore(o.globalOptions)
		if err != nil {
			return err
		}
		if _, _, err := recoverArchives(ctx, quiet, archiveRoot(quiet, ""), st, o.Now, true, failed); err != nil {
			return err
		}
	}
	if cfg.Bool("CCM_MAINTAIN_CLEAN") {
		// In config.env 0 (or empty) turns either backup rule off, as
		// config lists it; on the command line 0 means every backup.
		pol := clean.Policy{Temps: true, Orphans: true, Empty: cfg.Bool("CCM_CLEAN_EMPTY")}
		if n := cfg.Int("CCM_CLEAN_KEEP_BACKUPS"); n > 0 {
			pol.CapBackups, pol.KeepBackups = true, n
		}
		if d := cfg.Number("CCM_CLEAN_BACKUPS_OLDER_THAN_DAYS"); d > 0 {
			pol.OldBackups, pol.BackupsOlderThan = true, time.Duration(d*24*float64(time.Hour))
		}
		s, err := cleanConfigDir(ctx, cleanOptions{globalOptions: quiet, Policy: pol, DryRun: o.DryRun, Jobs: o.Jobs, Quiet: true, HaveLock: true, Now: o.Now, Failed: failed})
		if err != nil {
			return err
		}
		sum.Clean = s
	}
	// A prune that cannot run (the store locked past --lock-wait) is
	// reported after the summary of what archive and clean did.
	po, pruneErr := maintainPrune(ctx, o, cfg.Number("CCM_PRUNE_MAX_AGE_DAYS"), cfg.Number("CCM_PRUNE_MAX_SIZE_MB"), failed)
	switch {
	case errors.Is(pruneErr, context.Canceled):
		return pruneErr
	case pruneErr == nil:
		sum.Prune = po
	case !errors.Is(pruneErr, ccm.ErrLocked):
		// Prune refuses what it cannot decide safely (a transcript it
		// cannot read may reference any blob): a failed item, and the
		// rest of maintain's work stands.
		failed.add(fmt.Errorf("prune skipped: %w", pruneErr))
		pruneErr = nil
	}
	if !o.DryRun {
		st, err := maintainSearch(ctx, o.globalOptions, cfg.String("CCM_SEARCH_REDACT"))
		if err != nil {
			failed.add(fmt.Errorf("search index: %w", err))
		}
		sum.Search = st
	}
	_ = lockErr
	sum.Errors = failed.strings()
	if pruneErr != nil {
		sum.Errors = append(sum.Errors, "prune: "+pruneErr.Error())
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		line := maintainLine(sum, o.DryRun)
		if line == "" && o.Verbose {
			line = "maintain: nothing to do"
			if o.DryRun {
				line = "maintain (dry run): nothing would be done"
			}
		}
		if line != "" {
			fmt.Fprintln(o.Stdout, line)
		}
		if o.Verbose {
			if err := printMaintainPlan(o, sum); err != nil {
				return err
			}
		}
	}
	if pruneErr != nil {
		return fmt.Errorf("prune: %w", pruneErr)
	}
	return failed.status()
}

// maintainSearch brings the search index up to date, so that the next
// search has little to read (the sessions archived and removed above, the
// transcripts grown since), and vacuums it. Without an index (ccm search
// never ran) it does nothing.
func maintainSearch(ctx context.Context, g globalOptions, redact string) (*search.UpdateStats, error) {
	if _, err := os.Stat(filepath.Join(search.Dir(ccmHome(g)), "catalog")); err != nil {
		return nil, nil
	}
	res, err := search.ParseRedact(redact)
	if err != nil {
		return nil, fmt.Errorf("CCM_SEARCH_REDACT: %v", err)
	}
	var st search.UpdateStats
	err = withIndex(ctx, g, searchSources(ctx, g, res), false, 0, nil, func(ix *search.Index, up search.UpdateStats) (err error) {
		st = up
		// Messages of transcripts rewritten or archived since are
		// dropped from the segments they fill.
		st.Vacuumed, err = ix.Vacuum(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// maintainPrune prunes the store by age and size; no store yet, or no
// limit configured, is nothing to do.
func maintainPrune(ctx context.Context, o maintainOptions, ageDays, sizeMB float64, failed *itemErrors) (*pruneOutcome, error) {
	pol := prune.Policy{}
	if ageDays >= 0 {
		pol.AgeLimit, pol.MaxAge = true, time.Duration(ageDays*24*float64(time.Hour))
	}
	if sizeMB >= 0 {
		pol.SizeLimit, pol.MaxBytes = true, int64(sizeMB*prune.MiB)
	}
	if !pol.Any() {
		return &pruneOutcome{Skipped: "no limit configured"}, nil
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return nil, err
	}
	if o.LockWait > 0 {
		st.LockWait = o.LockWait
	}
	plan, err := prune.Prepare(ctx, st, pol, prune.Options{ClaudeDir: o.ClaudeDir, ArchiveDir: archiveRoot(o.globalOptions, ""), DryRun: o.DryRun})
	if errors.Is(err, ccm.ErrNoStore) {
		return &pruneOutcome{Skipped: "no store yet"}, nil
	}
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	out := &pruneOutcome{OverLimit: plan.OverLimitLine()}
	if o.Verbose && !o.JSON {
		var b bytes.Buffer
		if err := plan.WritePlan(&b, true); err != nil {
			return nil, err
		}
		out.plan = b.Bytes()
	}
	if o.DryRun {
		out.Deleted = len(plan.Deletions)
		for _, d := range plan.Deletions {
			out.Freed += d.DiskBytes
		}
		return out, nil
	}
	res, err := plan.Execute(ctx, nil)
	if res != nil {
		out.Deleted, out.Freed, out.Failed = res.Deleted, res.Freed, len(res.Errors)
	}
	if err != nil && !errors.Is(err, context.Canceled) && res != nil {
		for _, e := range res.Errors {
			failed.add(errors.New(e))
		}
		return out, nil
	}
	return out, err
}

// printMaintainPlan prints, after the summary, each part's plan under a
// line naming the part.
func printMaintainPlan(o maintainOptions, s *maintainSummary) error {
	if s.Archive != nil && len(s.Archive.Items) > 0 {
		fmt.Fprintln(o.Stdout, "archive:")
		if err := printArchivePlan(o.globalOptions, s.Archive); err != nil {
			return err
		}
	}
	if s.Clean != nil && s.Clean.Plan != nil && len(s.Clean.Plan.Items)+len(s.Clean.Plan.Spared) > 0 {
		fmt.Fprintln(o.Stdout, "clean:")
		if err := printCleanPlan(o.globalOptions, s.Clean.Plan); err != nil {
			return err
		}
	}
	if s.Prune != nil && len(s.Prune.plan) > 0 {
		fmt.Fprintln(o.Stdout, "prune:")
		if _, err := o.Stdout.Write(s.Prune.plan); err != nil {
			return err
		}
	}
	return nil
}

// maintainLine is the one summary line, "" when nothing was done.
func maintainLine(s *maintainSummary, dry bool) string {
	var parts []string
	if a := s.Archive; a != nil && (a.Planned > 0 || a.Failed > 0) {
		if dry {
			parts = append(parts, fmt.Sprintf("would archive %s sessions (%s)", ui.Count(a.Planned), ui.Bytes(a.Bytes)))
		} else {
			p := fmt.Sprintf("archived %s sessions (%s into %s)", ui.Count(a.Archived), ui.Bytes(a.Bytes), ui.Bytes(a.Packed))
			if a.LeftLive > 0 {
				p += fmt.Sprintf(", %s left in place (written to)", ui.Count(a.LeftLive))
			}
			if a.Failed > 0 {
				p += fmt.Sprintf(", %s failed", ui.Count(a.Failed))
			}
			parts = append(parts, p)
		}
	}
	if a := s.Archive; a != nil && len(a.Unfinished) > 0 {
		verb := "removed"
		if dry {
			verb = "would remove"
		}
		parts = append(parts, fmt.Sprintf("%s %s unfinished uploads (%s)", verb, ui.Count(len(a.Unfinished)), ui.Bytes(a.UnfinishedBytes)))
	}
	if c := s.Clean; c != nil && (c.Planned > 0 || c.Failed > 0) {
		if dry {
			parts = append(parts, fmt.Sprintf("would remove %s backups/temp files/folders (%s)", ui.Count(c.Planned), ui.Bytes(c.Bytes)))
		} else {
			p := fmt.Sprintf("removed %s backups/temp files/folders (%s)", ui.Count(c.Removed), ui.Bytes(c.Freed))
			if c.Failed > 0 {
				p += fmt.Sprintf(", %s failed", ui.Count(c.Failed))
			}
			parts = append(parts, p)
		}
	}
	if p := s.Prune; p != nil && (p.Deleted > 0 || p.Failed > 0) {
		verb := "pruned"
		if dry {
			verb = "would prune"
		}
		parts = append(parts, fmt.Sprintf("%s %s blobs (%s)", verb, ui.Count(p.Deleted), ui.Bytes(p.Freed)))
	}
	if p := s.Prune; p != nil && p.OverLimit != "" {
		// Once, and not a failure: the store is over its limit only by
		// what sessions reference (or hard pins).
		parts = append(parts, "the store is "+p.OverLimit)
	}
	if len(parts) == 0 {
		return ""
	}
	return "maintain: " + strings.Join(parts, "; ")
}
