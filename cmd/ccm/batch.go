package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"ccm/internal/batch"
	"ccm/internal/locate"
)

// forEach runs fn over n items with batch.Run on jobs workers (0: number
// of CPUs), showing a progress bar labelled label on a terminal only.
func forEach(ctx context.Context, stderr io.Writer, quiet bool, label string, n, jobs int, fn func(i int)) {
	var bar *termProgress
	if !quiet && n > 1 {
		if bar = newProgress(stderr); bar != nil {
			bar.Start(label, int64(n), false)
		}
	}
	batch.Run(ctx, n, jobs, fn, bar.add)
	bar.Finish()
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
	return locate.Archive(ccmHome(g), to, maintainConfig(g).String("CCM_ARCHIVE_DIR"))
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
