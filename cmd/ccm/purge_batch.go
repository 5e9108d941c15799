package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"ccm/internal/batch"
	"ccm/purge"
)

// activeWindow is how recently a session may have been written to before
// a batch leaves it alone: it is probably in use.
const activeWindow = purge.ActiveWindow

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

type batchFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// runPurgeBatch purges many files with --jobs workers; a failing file (or
// a folder that could not be read, in unread) is reported and the rest
// carries on (itemErrors).
func runPurgeBatch(ctx context.Context, o purgeOptions, files []inputFile, unread []batch.Failure) error {
	cands := make([]batch.Candidate, len(files))
	for i, f := range files {
		cands[i] = batch.Candidate{Path: f.Path, Named: f.Named}
	}
	sel := batch.Select(cands, batch.Criteria{Now: time.Now(), Active: activeWindow, OlderThan: o.OlderThan, MinSize: o.MinSize})
	sum := batchSummary{Files: len(files), Reports: []*purge.Report{}, Failures: []batchFailure{}, SkippedList: []string{}}
	failed := newItemErrors(o.globalOptions)
	fail := func(path string, err error) {
		if failed.add(err) {
			sum.Failed++
			sum.Failures = append(sum.Failures, batchFailure{path, err.Error()})
		}
	}
	for _, f := range append(unread, sel.Failed...) {
		fail(f.Path, fileError(f.Path, f.Err))
	}
	sum.Skipped = len(sel.Skipped)
	sum.SkippedList = append(sum.SkippedList, sel.Skipped...)
	var bar *termProgress
	if !o.JSON {
		if bar = newProgress(o.Stderr); bar != nil {
			bar.Start("purging", int64(len(sel.Todo)), false)
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
	batch.Run(ctx, len(sel.Todo), o.Jobs, func(i int) {
		path := sel.Todo[i]
		rep, err := purge.File(ctx, path, o.Purge)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fail(path, purgeError(path, err))
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
		if o.Verbose && !o.JSON {
			printPurgeReport(o.Stdout, rep, false)
		}
	}, bar.add)
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
		fmt.Fprintf(o.Stdout, "%s %d of %d files (%d unchanged, %d skipped, %d failed): %s -> %s, %d stubs, %d repairs\n",
			verb, sum.Purged, sum.Files, sum.Unchanged, sum.Skipped, sum.Failed,
			humanBytes(sum.BytesBefore), humanBytes(sum.BytesAfter), sum.Stubs, sum.Repairs)
		if sum.StaleTemps > 0 {
			fmt.Fprintf(o.Stdout, "removed %d temp files left by interrupted ccm runs\n", sum.StaleTemps)
		}
	}
	return failed.status()
}
