package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"ccm/internal/ui"
	"ccm/sessions"
)

// The commands that rewrite transcripts (purge, restore) work on what
// they were given in one of two ways. Files named one by one (FILE...,
// --current, --session) get each its full report. Anything else is a
// batch: a walk, --all, --project or a narrowing selector chose the
// files, and the command prints one summary line (each file's report
// only with -v), skips what it must not touch, and carries on past a
// file it cannot do. This file holds what those batches share.

// isBatch reports whether a selection is worked on as a batch: a walk,
// --all, --project or a narrowing selector chose it, or part of it was
// left out or could not be read. A selection that chose nothing is a
// batch too, so that it gets the summary ("0 of 0 files").
func isBatch(s *sessions.Selection) bool {
	if s.All || s.Project != "" || s.OlderThan > 0 || s.MinSize > 0 || len(s.Skipped) > 0 || len(s.Failed) > 0 || len(s.Todo) == 0 {
		return true
	}
	for _, t := range s.Todo {
		if !t.Named {
			return true
		}
	}
	return false
}

// skippedFile is a transcript a batch left alone, and why.
type skippedFile struct{ Path, Why string }

// batchFailure is a file a batch could not do, in its --json summary.
type batchFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// batchFailures are the files a batch could not do: each one reported as
// itemErrors reports it, and listed for the --json summary. It starts
// with what the selection could not read.
type batchFailures struct {
	errs *itemErrors
	list []batchFailure
}

func newBatchFailures(g globalOptions, sel *sessions.Selection) *batchFailures {
	f := &batchFailures{errs: newItemErrors(g), list: []batchFailure{}}
	for _, x := range sel.Failed {
		f.add(x.Path, fileError(x.Path, x.Err))
	}
	return f
}

// add reports that path failed with err (not safe for concurrent use).
func (f *batchFailures) add(path string, err error) {
	if f.errs.add(err) {
		f.list = append(f.list, batchFailure{path, err.Error()})
	}
}

// batchTargets splits a batch's selection into the transcripts to work
// on and those it skips, each with why: what the narrowing selectors
// left out, empty files, and the live sessions a walk, --all or
// --project found (one the user named is worked on: the rule of
// docs/sessions.md, sessions.Liveness).
func batchTargets(g globalOptions, s *sessions.Selection, now time.Time) (todo []string, skipped []skippedFile) {
	for _, k := range s.Skipped {
		skipped = append(skipped, skippedFile{k.Path, skipReason(k, s.Selector, now)})
	}
	var outside []string // folders walked outside the config dir
	for _, a := range s.Args {
		if fi, err := os.Stat(a); err == nil && fi.IsDir() && !sessions.InsideProjects(g.ClaudeDir, a) {
			outside = append(outside, a)
		}
	}
	live := sessions.NewLiveness(g.ClaudeDir, now, outside...)
	for _, t := range s.Todo {
		if t.File.Size == 0 {
			skipped = append(skipped, skippedFile{t.Path, "empty file (0 bytes)"})
			continue
		}
		if why := live.Live(t.File); why != "" && !t.Named {
			skipped = append(skipped, skippedFile{t.Path, "live: " + why})
			continue
		}
		todo = append(todo, t.Path)
	}
	return todo, skipped
}

// skippedPaths are the paths of skipped, for --json ([] when none).
func skippedPaths(skipped []skippedFile) []string {
	out := []string{}
	for _, s := range skipped {
		out = append(out, s.Path)
	}
	return out
}

// printSkipped names each file a batch skipped, with why, in path order:
// the lines -v adds after the files' reports.
func printSkipped(w io.Writer, skipped []skippedFile) {
	skipped = slices.Clone(skipped)
	slices.SortFunc(skipped, func(a, b skippedFile) int { return strings.Compare(a.Path, b.Path) })
	for _, s := range skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Path, s.Why)
	}
}

// batchTally is the count a batch over transcripts starts its summary
// with, in one wording for every such command.
type batchTally struct {
	Files     int // selected, skipped ones included
	Done      int // changed (or, in a dry run, to be)
	Unchanged int
	Skipped   int
	Failed    int
	Before    int64 // bytes of the files done and unchanged, before
	After     int64 // and after
}

// line is the tally as the summary says it, verb first: "purged 2 of 4
// files (0 unchanged, 1 skipped, 1 failed): 9.3 KB -> 4.1 KB". The
// command adds its own counts after it.
func (t batchTally) line(verb string) string {
	return fmt.Sprintf("%s %s of %s files (%s unchanged, %s skipped, %s failed): %s -> %s",
		verb, ui.Count(t.Done), ui.Count(t.Files), ui.Count(t.Unchanged), ui.Count(t.Skipped), ui.Count(t.Failed),
		ui.Bytes(t.Before), ui.Bytes(t.After))
}
