package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/prune"
)

type pruneOptions struct {
	globalOptions
	MaxAgeDays string // as typed; "" when not given
	MaxSizeMB  string
	GC         bool
	Evict      bool
	DryRun     bool
	Verbose    bool
	LockWait   time.Duration
	// claude-context-manager's one-action spellings.
	Stats    bool
	ListPins bool
	Pin      string
	Level    string
	Reason   string
	Unpin    string
}

func newPruneCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "keep the CCM store bounded: by reference, age and size",
		Description: `Deletes blobs from the CCM store by any combination of rules, applied in this
order within one run:

  --gc-unreferenced  unpinned blobs that nothing references: no transcript
                     under <claude dir>/projects (subagent files included),
                     no purge backup (*.jsonl.backup.*, compressed ones
                     too) and no archive (the manifests in the archive
                     folder and in every folder ccm archive --to wrote to)
                     mentions the key anywhere in a line. Refuses to run
                     when it finds no transcript at all (a wrong
                     --claude-dir).
  --max-age-days N   unpinned blobs whose last access is older than N days
                     (fractions allowed: 0.5 is 12 hours).
  --max-size-mb N    while the blobs' bytes on disk exceed N MB (1 MB =
                     1,048,576 bytes; fractions allowed): unpinned blobs,
                     oldest access first, then soft-pinned ones, never
                     hard-pinned ones.

A blob that a transcript, a backup or an archive references is part of its
session and is kept by every rule: only --evict-referenced lets the age and
size rules delete it too (after every unreferenced blob; pins still hold),
and ccm restore then names the stubs whose content went. Blobs stored or used
within the last hour are never deleted: a transcript may not reference them
yet. When the store stays over --max-size-mb, one line says how much of it is
referenced content and the command that would evict it, and prune exits 1.

Where references are is kept in a reference index in the store (refs/): each
file is read once, and again only when it changed (only its new bytes when it
was appended to); a missing or damaged index is made again, and every file is
checked against it before anything is deleted (docs/store.md).

A blob inside a pack is first deleted from the pack index; then packs left
without a live blob are removed, packs at least 20% unused are rewritten
(their live blobs copied into a new pack) and packs under 4 MB are merged
into it, each step crash-safe.

Prune prints one summary line, for cron; --dry-run changes nothing and
prints the same line with "would". -v adds the plan after it: one line per
blob with the reason it goes or stays, then the repack: each pack removed or
rewritten and each blob copied, with why. Prune takes the store's lock exclusively and
waits at most --lock-wait for running purges and hooks.

claude-context-manager's spellings still work, one per run: --stats, --list-pins,
--pin KEY --level soft|hard [--reason R], --unpin KEY.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "max-age-days", Usage: "delete unpinned blobs not accessed for `N` days"},
			&cli.StringFlag{Name: "max-size-mb", Usage: "delete until the store is at most `N` MB on disk"},
			&cli.BoolFlag{Name: "gc-unreferenced", Usage: "delete unpinned blobs no transcript references"},
			&cli.BoolFlag{Name: "evict-referenced", Usage: "let --max-age-days and --max-size-mb delete blobs that transcripts, backups or archives reference (their stubs stay stubs)"},
			dryRunFlag(""),
			verboseFlag("the plan: every blob deleted and kept, and the repack, each with why"),
			lockWaitFlag(),
			&cli.BoolFlag{Name: "stats", Usage: "print store statistics (as ccm cache stats)"},
			&cli.BoolFlag{Name: "list-pins", Usage: "list pinned blobs (as ccm pins)"},
			&cli.StringFlag{Name: "pin", Usage: "pin `KEY` (needs --level)"},
			&cli.StringFlag{Name: "level", Usage: "pin level for --pin: soft or hard"},
			&cli.StringFlag{Name: "reason", Usage: "reason for --pin"},
			&cli.StringFlag{Name: "unpin", Usage: "unpin `KEY`"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("prune takes no arguments (see ccm prune --help)")
			}
			wait, err := parseDuration("lock-wait", cmd.String("lock-wait"))
			if err != nil {
				return err
			}
			o := pruneOptions{globalOptions: globals(cmd), GC: cmd.Bool("gc-unreferenced"), Evict: cmd.Bool("evict-referenced"), DryRun: cmd.Bool("dry-run"),
				Verbose: cmd.Bool("verbose"), LockWait: wait, Stats: cmd.Bool("stats"),
				ListPins: cmd.Bool("list-pins"), Pin: cmd.String("pin"), Level: cmd.String("level"),
				Reason: cmd.String("reason"), Unpin: cmd.String("unpin")}
			if cmd.IsSet("max-age-days") {
				o.MaxAgeDays = nonEmpty(cmd.String("max-age-days"))
			}
			if cmd.IsSet("max-size-mb") {
				o.MaxSizeMB = nonEmpty(cmd.String("max-size-mb"))
			}
			return runPrune(ctx, o)
		},
	}
}

// nonEmpty keeps an explicitly empty flag value distinguishable from an
// absent flag, so "--max-size-mb ”" is rejected as not a number.
func nonEmpty(s string) string {
	if s == "" {
		return " "
	}
	return s
}

// parseAmount reads a non-negative, finite number for flag name.
func parseAmount(name, s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, usagef("--%s: %q is not a number", name, strings.TrimSpace(s))
	case f < 0:
		return 0, usagef("--%s: %s is negative", name, s)
	}
	return f, nil
}

// policy turns the flags into a prune policy, checking every value first.
func (o pruneOptions) policy() (prune.Policy, error) {
	pol := prune.Policy{GC: o.GC, EvictReferenced: o.Evict}
	if o.MaxAgeDays != "" {
		d, err := parseAmount("max-age-days", o.MaxAgeDays)
		if err != nil {
			return pol, err
		}
		if d > 100*365 {
			return pol, usagef("--max-age-days: %s is more than a century", o.MaxAgeDays)
		}
		pol.AgeLimit, pol.MaxAge = true, time.Duration(d*24*float64(time.Hour))
	}
	if o.MaxSizeMB != "" {
		mb, err := parseAmount("max-size-mb", o.MaxSizeMB)
		if err != nil {
			return pol, err
		}
		if mb > 1<<40 {
			return pol, usagef("--max-size-mb: %s is too large", o.MaxSizeMB)
		}
		pol.SizeLimit, pol.MaxBytes = true, int64(mb*prune.MiB)
	}
	if o.Evict && !pol.AgeLimit && !pol.SizeLimit {
		return pol, usagef("--evict-referenced goes with --max-age-days or --max-size-mb (gc never deletes what is referenced)")
	}
	return pol, nil
}

func runPrune(ctx context.Context, o pruneOptions) error {
	noteFallbacks(o.Stderr, o.Verbose)
	pol, err := o.policy()
	if err != nil {
		return err
	}
	// claude-context-manager ran one action per invocation; combining them with
	// rules is more likely a mistake than a wish, so it is refused.
	var actions []string
	for _, a := range []struct {
		on   bool
		name string
	}{{o.Stats, "--stats"}, {o.ListPins, "--list-pins"}, {o.Pin != "", "--pin"}, {o.Unpin != "", "--unpin"}, {pol.Any(), "a prune rule"}} {
		if a.on {
			actions = append(actions, a.name)
		}
	}
	if len(actions) > 1 {
		return usagef("%s cannot be combined: give one action per run", strings.Join(actions, " and "))
	}
	if (o.Level != "" || o.Reason != "") && o.Pin == "" {
		return usagef("--level and --reason go with --pin KEY")
	}
	switch {
	case o.Stats:
		return runCacheStats(ctx, o.globalOptions)
	case o.ListPins:
		return runPins(ctx, o.globalOptions)
	case o.Pin != "":
		if o.Level != "soft" && o.Level != "hard" {
			return usagef("--pin needs --level soft or --level hard")
		}
		return runPin(ctx, pinOptions{globalOptions: o.globalOptions, Key: o.Pin, Level: o.Level, Reason: o.Reason, DryRun: o.DryRun, Verbose: o.Verbose})
	case o.Unpin != "":
		return runPin(ctx, pinOptions{globalOptions: o.globalOptions, Key: o.Unpin, Level: "none", DryRun: o.DryRun, Verbose: o.Verbose})
	case !pol.Any():
		return usagef("nothing to do: give --gc-unreferenced, --max-age-days N or --max-size-mb N (see ccm prune --help)")
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	if o.LockWait > 0 {
		st.LockWait = o.LockWait
	}
	progress := newProgress(o.Stderr).Progress()
	plan, err := prune.Prepare(ctx, st, pol, prune.Options{ClaudeDir: o.ClaudeDir, ArchiveDir: archiveRoot(o.globalOptions, ""), DryRun: o.DryRun, Progress: progress})
	if errors.Is(err, ccm.ErrNoStore) {
		// A fresh install has no store yet: nothing to prune is not a
		// failure, or cron would mail an error every night.
		return reportNothingToPrune(o, st.Root())
	}
	if err != nil {
		return err
	}
	defer plan.Close()
	var res *prune.Result
	var execErr error
	if !o.DryRun {
		res, execErr = plan.Execute(ctx, progress)
		plan.Close()
	}
	switch {
	case o.JSON:
		if err := writeJSON(o.Stdout, pruneJSON(plan, res, o.Verbose)); err != nil {
			return err
		}
	default:
		if _, err := fmt.Fprintln(o.Stdout, plan.Summary(res)); err != nil {
			return err
		}
		if o.Verbose {
			if err := plan.WritePlan(o.Stdout, true); err != nil {
				return err
			}
		}
	}
	if execErr != nil {
		if errors.Is(execErr, context.Canceled) {
			return execErr
		}
		failed := newItemErrors(o.globalOptions)
		for _, e := range res.Errors {
			failed.add(errors.New(e))
		}
		return silentError{code: exitFindings}
	}
	if plan.OverLimit > 0 {
		return errFindings
	}
	return nil
}

// reportNothingToPrune answers a prune run on a store that does not exist
// yet: exit 0 with one line naming where ccm looked.
// pruneReport is prune's --json document: the summary, the plan (the
// blobs kept listed only with -v: they can be the whole store) and, after
// a real run, its result.
type pruneReport struct {
	DryRun  bool          `json:"dry_run"`
	Summary string        `json:"summary"`
	Plan    prunePlan     `json:"plan"`
	Result  *prune.Result `json:"result,omitempty"`
}

type prunePlan struct {
	*prune.Plan
	Kept *[]prune.Decision `json:"kept,omitempty"` // shadows the plan's: nil without -v
}

func pruneJSON(plan *prune.Plan, res *prune.Result, verbose bool) pruneReport {
	r := pruneReport{DryRun: res == nil, Summary: plan.Summary(res), Plan: prunePlan{Plan: plan}, Result: res}
	if verbose {
		kept := plan.Kept
		r.Plan.Kept = &kept
	}
	return r
}

func reportNothingToPrune(o pruneOptions, root string) error {
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"store": root, "exists": false, "deletions": []any{}, "bytes_before": 0, "bytes_after": 0})
	}
	_, err := fmt.Fprintf(o.Stdout, "prune: nothing to prune: no store at %s yet\n", root)
	return err
}
