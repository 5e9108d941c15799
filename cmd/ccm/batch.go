package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"ccm/internal/batch"
	"ccm/internal/ui"
	"ccm/sessions"
)

// forEach runs fn over n items with batch.Run on jobs workers (0: number
// of CPUs), showing a progress bar labelled label on a terminal only.
func forEach(ctx context.Context, stderr io.Writer, quiet bool, label string, n, jobs int, fn func(i int)) {
	var bar *ui.Bars
	if !quiet && n > 1 {
		if bar = newProgress(stderr); bar != nil {
			bar.Start(label, int64(n), false)
		}
	}
	batch.Run(ctx, n, jobs, fn, bar.Inc)
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

// archiveRoot is where ccm archive puts archives: --to DIR, else
// $CCM_ARCHIVE_DIR (env or config.env), else <ccm home>/archive.
func archiveRoot(g globalOptions, to string) string {
	if to != "" {
		return to
	}
	return sessions.ArchiveDir(ccmHome(g), to, maintainConfig(g).String("CCM_ARCHIVE_DIR"))
}
