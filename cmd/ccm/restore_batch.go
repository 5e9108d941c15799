package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"ccm/ccm"
	"ccm/internal/ui"
	"ccm/prune"
	"ccm/purge/restore"
	"ccm/sessions"
)

// restoreBatchSummary is the JSON form of a batch restore: the counts of
// its summary line, each file's report, each failure and each file
// skipped.
type restoreBatchSummary struct {
	Files       int               `json:"files"`
	Restored    int               `json:"restored"`
	Unchanged   int               `json:"unchanged"`
	Skipped     int               `json:"skipped"`
	Failed      int               `json:"failed"`
	BytesBefore int64             `json:"bytes_before"`
	BytesAfter  int64             `json:"bytes_after"`
	Stubs       int               `json:"stubs_restored"`
	StayStubs   int               `json:"stubs_not_restored"`
	Reports     []*restore.Report `json:"reports"`
	Failures    []batchFailure    `json:"failures"`
	SkippedList []string          `json:"skipped_files"`
}

// runRestoreBatch restores the files a walk, --all, --project or a
// narrowing selector chose, as a purge batch purges them (batch_files.go):
// live sessions it found, empty files and, with --backup, the sessions no
// purge changed (they have no backup) are skipped; a file that fails is
// reported and the rest carries on (itemErrors). It prints the summary
// first and, with -v, each file's report and each file skipped. It exits
// 1 when a file failed or a stub stays a stub.
func runRestoreBatch(ctx context.Context, o restoreOptions, sel *sessions.Selection, opt restore.Options) error {
	sum := restoreBatchSummary{Files: len(sel.Todo) + len(sel.Skipped), Reports: []*restore.Report{}}
	failed := newBatchFailures(o.globalOptions, sel)
	todo, skipped := batchTargets(o.globalOptions, sel, time.Now())
	var evicted map[ccm.Key]prune.Eviction // read when a stub stays a stub
	forEach(ctx, o.Stderr, o.JSON, "restoring", len(todo), 1, func(i int) {
		path := todo[i]
		rep, err := restoreOne(ctx, o, path, opt)
		switch {
		case errors.Is(err, restore.ErrNoBackup):
			skipped = append(skipped, skippedFile{path, noBackupWhy})
			return
		case err != nil:
			failed.add(path, purgeError(path, err))
			return
		}
		explainEvicted(rep, storeRoot(o.globalOptions), &evicted)
		sum.Reports = append(sum.Reports, rep)
		sum.BytesBefore += rep.BytesBefore
		sum.BytesAfter += rep.BytesAfter
		sum.Stubs += rep.Restored
		sum.StayStubs += len(rep.Missing)
		if rep.Changed {
			sum.Restored++
		} else {
			sum.Unchanged++
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	sum.Failures = failed.list
	sum.Failed = len(sum.Failures)
	sum.SkippedList = skippedPaths(skipped)
	sum.Skipped = len(skipped)
	if !o.DryRun {
		noteRestored(ctx, o.globalOptions, sum.Reports)
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.Stdout, restoreBatchLine(o, &sum))
		if o.Verbose {
			// After the summary, each file's report, in path order, and
			// each file skipped.
			reps := slices.Clone(sum.Reports)
			slices.SortFunc(reps, func(a, b *restore.Report) int { return strings.Compare(a.Path, b.Path) })
			for _, rep := range reps {
				printRestoreReport(o, rep)
			}
			printSkipped(o.Stdout, skipped)
		}
	}
	if sum.StayStubs > 0 {
		return silentError{code: exitFindings}
	}
	return failed.errs.status()
}

// noBackupWhy is why a restore --backup over several sessions skips one:
// no purge changed it, so it has no backup to go back to.
const noBackupWhy = "no backup (no purge changed it)"

// restoreBatchLine is a batch restore's summary: the tally every batch
// starts with, then what came back.
func restoreBatchLine(o restoreOptions, s *restoreBatchSummary) string {
	verb := "restored"
	if o.DryRun {
		verb = "would restore"
	}
	t := batchTally{Files: s.Files, Done: s.Restored, Unchanged: s.Unchanged, Skipped: s.Skipped, Failed: s.Failed,
		Before: s.BytesBefore, After: s.BytesAfter}
	if o.FromBackup {
		return t.line(verb) + ", each from its newest purge backup"
	}
	return fmt.Sprintf("%s, %s stubs restored, %s stay stubs", t.line(verb), ui.Count(s.Stubs), ui.Count(s.StayStubs))
}
