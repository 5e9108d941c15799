package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

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

// runPurgeBatch purges many files with --jobs workers; a failing file is
// reported and the rest carries on.
func runPurgeBatch(ctx context.Context, o purgeOptions, files []inputFile) error {
	now := time.Now()
	var todo []string
	sum := batchSummary{Files: len(files), Reports: []*purge.Report{}, Failures: []batchFailure{}, SkippedList: []string{}}
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil {
			sum.Failed++
			sum.Failures = append(sum.Failures, batchFailure{f.Path, fileError(f.Path, err).Error()})
			continue
		}
		age := now.Sub(fi.ModTime())
		switch {
		case !f.Named && age < activeWindow,
			o.OlderThan > 0 && age < o.OlderThan,
			fi.Size() < o.MinSize,
			fi.Size() == 0:
			sum.Skipped++
			sum.SkippedList = append(sum.SkippedList, f.Path)
			continue
		}
		todo = append(todo, f.Path)
	}
	jobs := o.Jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	var bar *termProgress
	if !o.JSON {
		if bar = newProgress(o.Stderr); bar != nil {
			bar.Start("purging", int64(len(todo)), false)
		}
	}
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range work {
				rep, err := purge.File(ctx, path, o.Purge)
				mu.Lock()
				if err != nil {
					sum.Failed++
					sum.Failures = append(sum.Failures, batchFailure{path, purgeError(path, err).Error()})
					if !o.JSON {
						fmt.Fprintf(o.Stderr, "ccm: %v\n", purgeError(path, err))
					}
				} else {
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
				}
				if bar != nil {
					bar.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
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
	if sum.Failed > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}
