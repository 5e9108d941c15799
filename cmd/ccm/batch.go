package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// forEach runs fn over n items with jobs workers (0: number of CPUs),
// showing a progress bar labelled label on a terminal only. Each item's
// error is fn's business (batch commands report it and carry on); forEach
// stops handing out items when ctx is done. It is the worker pool of the
// batch purge, shared by archive, unarchive and clean.
func forEach(ctx context.Context, stderr io.Writer, quiet bool, label string, n, jobs int, fn func(i int)) {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	var bar *termProgress
	if !quiet && n > 1 {
		if bar = newProgress(stderr); bar != nil {
			bar.Start(label, int64(n), false)
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(jobs, max(n, 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				fn(i)
				if bar != nil {
					bar.Add(1)
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
}

// parseAge reads an age such as 30d, 36h, 90m, 2w or 1.5d (a bare number
// is days).
func parseAge(flag, s string) (time.Duration, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	unit := 24 * time.Hour
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSuffix(t, u.suffix), u.d
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 100*365 {
		return 0, usagef("--%s: %q is not an age (say 30d, 36h or 90m)", flag, s)
	}
	return time.Duration(f * float64(unit)), nil
}

// archiveRoot is where ccm archive puts archives: --to DIR, else
// $CCM_ARCHIVE_DIR (env or config.env), else <ccm home>/archive.
func archiveRoot(g globalOptions, to string) string {
	if to != "" {
		return to
	}
	if d := maintainConfig(g).String("CCM_ARCHIVE_DIR"); d != "" {
		return d
	}
	return filepath.Join(ccmHome(g), "archive")
}

// humanAge prints a duration in the largest unit that keeps it short.
func humanAge(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(d.Hours()))
	default:
		s = fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	if neg {
		return "-" + s
	}
	return s
}
