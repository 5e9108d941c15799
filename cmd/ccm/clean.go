package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/ui"
	"ccm/search"
	"ccm/sessions/clean"
	"ccm/transcript"
)

type cleanOptions struct {
	globalOptions
	Policy   clean.Policy
	DryRun   bool
	Verbose  bool // the plan after the summary
	Jobs     int
	Quiet    bool // maintain: no progress bar
	HaveLock bool // maintain holds the maintenance lock already
	Now      time.Time
	Failed   *itemErrors // maintain's, shared by its parts; nil: the run's own
}

func newCleanCommand() *cli.Command {
	return &cli.Command{
		Name:  "clean",
		Usage: "remove old purge backups, temp files, empty sessions and orphaned subagent folders",
		Description: `Plans first, with a reason for every deletion, then removes (each file under
its transcript's lock, checked again right before). Nothing of a live
session (written in the last 2 minutes or open for writing) is touched.

  --backups-older-than AGE  purge backups made longer ago (by the stamp in
                            their name; a hard-link backup keeps the old
                            mtime); 0 removes every backup
  --keep-backups N          keep only the N newest backups per transcript;
                            0 keeps none
  --temp                    temp files left by killed ccm runs (purge, archive)
  --orphans                 <session>/ folders (subagents, tool-results)
                            whose transcript is gone
  --empty                   0-byte sessions and sessions with no record

Without any of these, ccm clean removes backups older than 7 days, temp files
and orphaned folders (--empty is never implied). ccm's own purge keeps a
transcript's modification time, so right after ccm purge --all,
ccm clean --backups-older-than 0 removes every backup it made. What the
rules would remove but safety keeps (a session written by Claude Code in the
last 2 minutes, a file open for writing) is counted in the summary, with why.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backups-older-than", Usage: "remove purge backups made longer than `AGE` ago (7d; 0: every backup)"},
			&cli.IntFlag{Name: "keep-backups", HideDefault: true, Usage: "keep only the `N` newest backups per transcript (0: none)"},
			&cli.BoolFlag{Name: "temp", Usage: "remove temp files left by killed ccm runs"},
			&cli.BoolFlag{Name: "orphans", Usage: "remove subagent folders whose session is gone"},
			&cli.BoolFlag{Name: "empty", Usage: "remove empty and zero-byte sessions"},
			dryRunFlag(""),
			verboseFlag("the plan: every file or folder removed, and what safety keeps, each with why"),
			jobsFlag("removals at once", "number of CPUs"),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("clean takes no arguments (see ccm clean --help)")
			}
			o := cleanOptions{globalOptions: globals(cmd), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Jobs: int(cmd.Int("jobs"))}
			pol := clean.Policy{Temps: cmd.Bool("temp"), Orphans: cmd.Bool("orphans"), Empty: cmd.Bool("empty")}
			if cmd.IsSet("backups-older-than") {
				d, err := parseDuration("backups-older-than", cmd.String("backups-older-than"))
				if err != nil {
					return err
				}
				pol.OldBackups, pol.BackupsOlderThan = true, d
			}
			if cmd.IsSet("keep-backups") {
				n := cmd.Int("keep-backups")
				if n < 0 {
					return usagef("--keep-backups: %d is negative (0 keeps no backup)", n)
				}
				pol.CapBackups, pol.KeepBackups = true, int(n)
			}
			if !pol.Any() {
				pol = clean.Policy{OldBackups: true, BackupsOlderThan: 7 * 24 * time.Hour, Temps: true, Orphans: true}
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
		if o.Verbose {
			if err := printCleanPlan(o.globalOptions, sum.Plan); err != nil {
				return err
			}
		}
	}
	if sum.Failed > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}

// printCleanPlan prints clean's plan after its summary: what it removes
// (or removed, or failed to), what safety keeps, each with why.
func printCleanPlan(g globalOptions, p *clean.Plan) error {
	if p == nil || len(p.Items)+len(p.Spared) == 0 {
		return nil
	}
	t := ui.NewTable(ui.Col{}, ui.Col{}, ui.Col{Right: true}, ui.Col{Shrink: true, Min: 20}, ui.Col{Shrink: true, Min: 20})
	for _, it := range p.Items {
		action := "remove"
		switch it.Result {
		case "removed":
			action = "removed"
		case "failed":
			action = "failed"
		}
		why := it.Reason
		if it.Error != "" {
			why += ": " + it.Error
		}
		t.Add(action, it.Kind, ui.Bytes(it.Bytes), shortHome(it.Path), why)
	}
	for _, s := range p.Spared {
		t.Add("keep", s.Kind, ui.Bytes(s.Bytes), shortHome(s.Path), s.Reason)
	}
	return writeTable(g, t)
}

func cleanSummaryLine(s *cleanSummary) string {
	line := fmt.Sprintf("clean: removed %s of %s items, freed %s (%s failed)", ui.Count(s.Removed), ui.Count(s.Planned), ui.Bytes(s.Freed), ui.Count(s.Failed))
	if s.DryRun {
		line = fmt.Sprintf("clean: would remove %s items, %s", ui.Count(s.Planned), ui.Bytes(s.Bytes))
		if s.Failed > 0 {
			line += fmt.Sprintf(" (%s could not be read)", ui.Count(s.Failed))
		}
	}
	return line + keptSummary(s.Plan)
}

// keptSummary says what the rules would have removed but safety kept, and
// why, per kind and reason: "; kept 31 backups (19.7 MB): their session was
// written in the last 2 minutes".
func keptSummary(p *clean.Plan) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, g := range p.SparedGroups() {
		fmt.Fprintf(&b, "; kept %s %s (%s): %s", ui.Count(g.Count), plural(g.Count, cleanNoun(g.Kind)), ui.Bytes(g.Bytes), g.Reason)
	}
	return b.String()
}

// cleanNoun names an item kind of clean's plan.
func cleanNoun(kind string) string {
	switch kind {
	case "backup":
		return "backup"
	case "temp":
		return "temp file"
	case "empty":
		return "empty session"
	case "orphan":
		return "orphaned folder"
	}
	return kind
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
	failed := o.Failed
	if failed == nil {
		failed = newItemErrors(o.globalOptions)
	}
	// What the scan could not read are failed items: reported, counted,
	// and the rest cleaned.
	sum := &cleanSummary{DryRun: o.DryRun, Planned: len(plan.Items), Bytes: plan.Bytes, Plan: plan, Errors: errStrings(errs)}
	sum.Failed += failed.addAll(errs)
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
	defer func() {
		// Removed backups leave the reference index (their references
		// with them); prune would drop them too, without reading.
		var gone []string
		for _, it := range plan.Items {
			if it.Result == "removed" && it.Kind != "orphan" {
				gone = append(gone, it.Path)
			}
		}
		noteRefs(ctx, o.globalOptions, transcript.ProjectsDir(o.ClaudeDir), gone...)
	}()
	forEach(ctx, o.Stderr, o.JSON || o.Quiet, "cleaning", len(groups), o.Jobs, func(i int) {
		for _, it := range groups[i] {
			err := plan.Remove(ctx, it, lockDir)
			mu.Lock()
			if err != nil {
				it.Result, it.Error = "failed", err.Error()
				if failed.add(err) {
					sum.Failed++
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
	// the next search: what it could not drop (still held by the index
	// until a search brings it up to date) is a failed item.
	if err := search.Drop(ctx, search.Dir(ccmHome(o.globalOptions)), removed); err != nil {
		if failed.add(fmt.Errorf("search index: %w", err)) {
			sum.Failed++
		}
	}
	return sum, ctx.Err()
}
