package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/clean"
	"ccm/internal/search"
)

type cleanOptions struct {
	globalOptions
	Policy   clean.Policy
	DryRun   bool
	Jobs     int
	Quiet    bool // maintain: no plan lines
	HaveLock bool // maintain holds the maintenance lock already
	Now      time.Time
}

func newCleanCommand() *cli.Command {
	return &cli.Command{
		Name:  "clean",
		Usage: "remove old purge backups, temp files, empty sessions and orphaned subagent folders",
		Description: `Plans first, with a reason for every deletion, then removes (each file under
its transcript's lock, checked again right before). Nothing of a live
session (written in the last 2 minutes or open for writing) is touched.

  --backups-older-than AGE  purge backups made longer ago (by the stamp in
                            their name; a hard-link backup keeps the old mtime)
  --keep-backups N          keep only the N newest backups per transcript
  --temp                    temp files left by killed ccm runs (purge, archive)
  --orphans                 <session>/ folders (subagents, tool-results)
                            whose transcript is gone
  --empty                   0-byte sessions and sessions with no record

Without any of these, ccm clean removes backups older than 7 days, temp files
and orphaned folders (--empty is never implied).

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backups-older-than", Usage: "remove purge backups made longer than `AGE` ago (7d)"},
			&cli.IntFlag{Name: "keep-backups", Usage: "keep only the `N` newest backups per transcript"},
			&cli.BoolFlag{Name: "temp", Usage: "remove temp files left by killed ccm runs"},
			&cli.BoolFlag{Name: "orphans", Usage: "remove subagent folders whose session is gone"},
			&cli.BoolFlag{Name: "empty", Usage: "remove empty and zero-byte sessions"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the plan and change nothing"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "removals at once (default: number of CPUs)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("clean takes no arguments (see ccm clean --help)")
			}
			o := cleanOptions{globalOptions: globals(cmd), DryRun: cmd.Bool("dry-run"), Jobs: int(cmd.Int("jobs"))}
			pol := clean.Policy{Temps: cmd.Bool("temp"), Orphans: cmd.Bool("orphans"), Empty: cmd.Bool("empty")}
			if s := cmd.String("backups-older-than"); s != "" {
				d, err := parseAge("backups-older-than", s)
				if err != nil {
					return err
				}
				if d == 0 {
					return usagef("--backups-older-than must be more than 0")
				}
				pol.BackupsOlderThan = d
			}
			if cmd.IsSet("keep-backups") {
				if n := cmd.Int("keep-backups"); n < 1 {
					return usagef("--keep-backups must be at least 1")
				} else {
					pol.KeepBackups = int(n)
				}
			}
			if !pol.Any() {
				pol = clean.Policy{BackupsOlderThan: 7 * 24 * time.Hour, Temps: true, Orphans: true}
			}
			o.Policy = pol
			return runClean(ctx, o)
		},
	}
}

// cleanSummary is the JSON form of a clean.
type cleanSummary struct {
	DryRun  bool        `json:"dry_run"`
	Planned int         `json:"planned"`
	Removed int         `json:"removed"`
	Failed  int         `json:"failed"`
	Bytes   int64       `json:"bytes"`
	Freed   int64       `json:"freed"`
	Plan    *clean.Plan `json:"plan"`
	Errors  []string    `json:"scan_errors"`
}

func runClean(ctx context.Context, o cleanOptions) error {
	sum, err := cleanConfigDir(ctx, o)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.Stdout, cleanSummaryLine(sum))
	}
	if sum.Failed > 0 || len(sum.Errors) > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}

func cleanSummaryLine(s *cleanSummary) string {
	if s.DryRun {
		return fmt.Sprintf("clean: would remove %d items, %s", s.Planned, humanBytes(s.Bytes))
	}
	return fmt.Sprintf("clean: removed %d of %d items, freed %s (%d failed)", s.Removed, s.Planned, humanBytes(s.Freed), s.Failed)
}

func cleanConfigDir(ctx context.Context, o cleanOptions) (*cleanSummary, error) {
	if o.Jobs < 0 {
		return nil, usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if !o.DryRun && !o.HaveLock {
		lk, err := maintenanceLock(ctx, o.globalOptions)
		if err != nil {
			return nil, err
		}
		defer lk.Unlock()
	}
	plan, errs, err := clean.Decide(ctx, o.ClaudeDir, archiveRoot(o.globalOptions, ""), o.Policy, o.Now)
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		fmt.Fprintf(o.Stderr, "ccm: %v\n", e)
	}
	sum := &cleanSummary{DryRun: o.DryRun, Planned: len(plan.Items), Bytes: plan.Bytes, Plan: plan, Errors: errStrings(errs)}
	if !o.JSON && !o.Quiet {
		for _, it := range plan.Items {
			fmt.Fprintf(o.Stdout, "remove  %-6s  %s  %s  %s\n", it.Kind, humanBytes(it.Bytes), it.Path, it.Reason)
		}
		for _, s := range plan.Spared {
			fmt.Fprintf(o.Stdout, "keep    %s\n", s)
		}
	}
	if o.DryRun {
		return sum, nil
	}
	lockDir := filepath.Join(ccmHome(o.globalOptions), "locks")
	var mu sync.Mutex
	var removed []string
	// Items of one transcript share its lock: they go to one worker, in turn.
	var groups [][]*clean.Item
	byTranscript := map[string]int{}
	for _, it := range plan.Items {
		if it.Transcript != "" {
			if g, ok := byTranscript[it.Transcript]; ok {
				groups[g] = append(groups[g], it)
				continue
			}
			byTranscript[it.Transcript] = len(groups)
		}
		groups = append(groups, []*clean.Item{it})
	}
	forEach(ctx, o.Stderr, o.JSON || o.Quiet, "cleaning", len(groups), o.Jobs, func(i int) {
		for _, it := range groups[i] {
			err := plan.Remove(ctx, it, lockDir)
			mu.Lock()
			if err != nil {
				it.Result, it.Error = "failed", err.Error()
				sum.Failed++
				if !o.JSON {
					fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
				}
			} else {
				it.Result = "removed"
				sum.Removed++
				sum.Freed += it.Bytes
				removed = append(removed, it.Path)
			}
			mu.Unlock()
		}
	})
	// The search index forgets the removed sessions' messages now, not at
	// the next search.
	if err := search.Drop(ctx, search.Dir(ccmHome(o.globalOptions)), removed); err != nil {
		fmt.Fprintf(o.Stderr, "ccm: warning: search index: %v\n", err)
	}
	return sum, ctx.Err()
}
