package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccm/internal/batch"
	"ccm/sessions/locate"
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

// itemErrors is the one rule of every batch command (purge of many
// files, sessions, du, archive, clean, maintain, prune; unarchive keeps
// it on its own) for
// what it could not do, one item or one folder at a time: each error is
// printed as one "ccm: ..." line on stderr as it is found (not under
// --json, whose output lists them), counted in the summary's "failed",
// and the batch carries on with the rest; at the end the exit status is
// 1 when any failed. A message seen already (a folder that two parts of
// ccm maintain both failed to read) is neither printed nor counted again.
type itemErrors struct {
	mu   sync.Mutex
	w    io.Writer // nil: not printed
	seen map[string]bool
	list []string
}

// newItemErrors prints to g's stderr unless g asks for JSON.
func newItemErrors(g globalOptions) *itemErrors {
	e := &itemErrors{seen: map[string]bool{}}
	if !g.JSON {
		e.w = g.Stderr
	}
	return e
}

// add reports one failed item; it returns false for one seen already.
func (e *itemErrors) add(err error) bool {
	msg := strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", " "), "ccm: ")
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen[msg] {
		return false
	}
	e.seen[msg] = true
	e.list = append(e.list, msg)
	if e.w != nil {
		fmt.Fprintf(e.w, "ccm: %s\n", msg)
	}
	return true
}

// addAll reports each of errs and returns how many were new.
func (e *itemErrors) addAll(errs []error) int {
	n := 0
	for _, err := range errs {
		if e.add(err) {
			n++
		}
	}
	return n
}

// count is how many items failed.
func (e *itemErrors) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list)
}

// strings lists the errors, for --json ([] when none).
func (e *itemErrors) strings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string{}, e.list...)
}

// status is the batch's outcome: exit status 1 (already reported) when
// any item failed.
func (e *itemErrors) status() error {
	if e.count() > 0 {
		return silentError{code: exitFindings}
	}
	return nil
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
