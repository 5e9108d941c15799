package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"ccm/internal/batch"
	"ccm/internal/ui"
	"ccm/purge"
	"ccm/sessions"
)

// batchSummary is the JSON form of a batch purge.
type batchSummary struct {
	Files       int             `json:"files"`
	Purged      int             `json:"purged"`
	Unchanged   int             `json:"unchanged"`
	Skipped     int             `json:"skipped"`
	Failed      int             `json:"failed"`
	BytesBefore int64           `json:"bytes_before"`
	BytesAfter  int64           `json:"bytes_after"`
	Stubs       int             `json:"stubs"`
	Repairs     int             `json:"repairs"`
	StaleTemps  int             `json:"stale_temps_removed"`
	Reports     []*purge.Report `json:"reports"`
	Failures    []batchFailure  `json:"failures"`
	SkippedList []string        `json:"skipped_files"`
}

// runPurgeBatch purges the selected files with --jobs workers; a failing
// file (or a folder that could not be read) is reported and the rest
// carries on (itemErrors). The narrowing selectors' leftovers, live
// sessions not named (the live rule, sessions.Liveness) and empty files
// are skipped.
func runPurgeBatch(ctx context.Context, o purgeOptions, sel *sessions.Selection) error {
	sum := batchSummary{Files: len(sel.Todo) + len(sel.Skipped), Reports: []*purge.Report{}, SkippedList: []string{}}
	failed := newBatchFailures(o.globalOptions, sel)
	todo, skipped := batchTargets(o.globalOptions, sel, time.Now())
	sum.SkippedList = skippedPaths(skipped)
	sum.Skipped = len(sum.SkippedList)
	var bar *ui.Bars
	if !o.JSON {
		if bar = newProgress(o.Stderr); bar != nil {
			bar.Start("purging", int64(len(todo)), false)
		}
	}
	if st := o.Purge.Store; st != nil && !o.Purge.DryRun && !o.Purge.NoStore && !o.Purge.RepairOnly {
		// One pack for the whole batch: each purge syncs the shared
		// batch before its rename, and the last commit closes it.
		shared := st.NewBatch()
		defer shared.Close()
		o.Purge.Batch = shared
	}
	var mu sync.Mutex
	batch.Run(ctx, len(todo), o.Jobs, func(i int) {
		path := todo[i]
		rep, err := purge.File(ctx, path, o.Purge)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed.add(path, purgeError(path, err))
			return
		}
		sum.Reports = append(sum.Reports, rep)
		sum.BytesBefore += rep.BytesBefore
		sum.BytesAfter += rep.BytesAfter
		sum.Stubs += rep.Stubs
		sum.Repairs += repairCount(rep.Stats)
		sum.StaleTemps += rep.StaleTemps
		if rep.Changed {
			sum.Purged++
		} else {
			sum.Unchanged++
		}
	}, bar.Inc)
	bar.Finish()
	if o.Purge.Batch != nil {
		// Every purge synced what it stored; this closes the pack.
		if err := o.Purge.Batch.Commit(); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sum.Failures = failed.list
	sum.Failed = len(sum.Failures)
	notePurged(ctx, o, sum.Reports)
	if o.JSON {
		if err := writeJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		verb := "purged"
		if o.Purge.DryRun {
			verb = "would purge"
		}
		t := batchTally{Files: sum.Files, Done: sum.Purged, Unchanged: sum.Unchanged, Skipped: sum.Skipped, Failed: sum.Failed,
			Before: sum.BytesBefore, After: sum.BytesAfter}
		fmt.Fprintf(o.Stdout, "%s, %s stubs, %s repairs\n", t.line(verb), ui.Count(sum.Stubs), ui.Count(sum.Repairs))
		if sum.StaleTemps > 0 {
			fmt.Fprintf(o.Stdout, "removed %d temp files left by interrupted ccm runs\n", sum.StaleTemps)
		}
		if o.Verbose {
			// After the summary, each file's report, in path order (the
			// workers finish in any order).
			reps := slices.Clone(sum.Reports)
			slices.SortFunc(reps, func(a, b *purge.Report) int { return strings.Compare(a.Path, b.Path) })
			for _, rep := range reps {
				printPurgeReport(o.Stdout, rep, false, true)
			}
			printSkipped(o.Stdout, skipped)
		}
	}
	return failed.errs.status()
}
