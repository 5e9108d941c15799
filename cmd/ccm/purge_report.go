package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"ccm/internal/ui"
	"ccm/purge"
	"ccm/transcript/rewrite"
)

// printPurgeReport prints what a purge of one file did; a dry run's plan
// with verbose. A batch's -v prints each file's report without its plan
// (inBatch), so the report does not offer -v for it.
func printPurgeReport(w io.Writer, r *purge.Report, verbose, inBatch bool) {
	verb := "purged"
	switch {
	case r.DryRun:
		verb = "would purge"
	case !r.Changed:
		fmt.Fprintf(w, "%s: nothing to purge (already purged, or nothing large and nothing broken)\n", r.Path)
		printStaleTemps(w, r)
		return
	}
	fmt.Fprintf(w, "%s %s\n", verb, r.Path)
	fmt.Fprintf(w, "  size        %s\n", sizeChange(r))
	if r.Live {
		fmt.Fprintf(w, "  live        Claude Code is writing this session: its current turn was left as it is\n")
	}
	s := r.Stats
	if s.ThinkingRemoved > 0 || verbose {
		fmt.Fprintf(w, "  thinking    %s blocks removed (%s records that held only thinking dropped)\n", ui.Count(s.ThinkingRemoved), ui.Count(s.DroppedThinking))
	}
	if s.Stubs > 0 || verbose {
		where := "moved to the CCM store"
		if r.DryRun {
			where = "would move to the CCM store"
		}
		fmt.Fprintf(w, "  stubs       %s outputs, inputs and images (%s) %s\n", ui.Count(s.Stubs), ui.Bytes(s.StubbedBytes), where)
	}
	if s.StaleReads+s.DuplicateOutputs+s.OldTodos+s.ReplayedHooks > 0 || verbose {
		fmt.Fprintf(w, "  compacted   %d stale reads, %d duplicate outputs, %d superseded todo lists, %d replayed hook contexts (among the stubs)\n", s.StaleReads, s.DuplicateOutputs, s.OldTodos, s.ReplayedHooks)
	}
	if s.DroppedProgress+s.DroppedBookkeeping+s.DroppedArchived > 0 || verbose {
		fmt.Fprintf(w, "  dropped     %s progress, %s per-turn bookkeeping records", ui.Count(s.DroppedProgress), ui.Count(s.DroppedBookkeeping))
		if s.DroppedArchived > 0 {
			fmt.Fprintf(w, ", %s records before the compact boundary archived", ui.Count(s.DroppedArchived))
		}
		fmt.Fprintln(w)
	}
	if parts := repairParts(s); len(parts) > 0 {
		fmt.Fprintf(w, "  repairs     %s\n", strings.Join(parts, ", "))
	} else if verbose {
		fmt.Fprintf(w, "  repairs     none needed\n")
	}
	if s.Reparented > 0 && verbose {
		fmt.Fprintf(w, "  relinked    %s records whose parent was dropped now point at its nearest kept ancestor\n", ui.Count(s.Reparented))
	}
	if s.Injected {
		fmt.Fprintf(w, "  compaction  injected in front of the kept turns (Claude Code resumes from it)\n")
	} else if s.InjectSkipped != "" {
		fmt.Fprintf(w, "  compaction  not injected: %s\n", s.InjectSkipped)
	}
	if s.ArchivedLines > 0 {
		fmt.Fprintf(w, "  archive     %s lines before the compact boundary moved to the store as one blob\n", ui.Count(s.ArchivedLines))
	} else if s.ArchiveSkipped != "" {
		fmt.Fprintf(w, "  archive     not archived: %s\n", s.ArchiveSkipped)
	}
	if r.EstimateError != "" {
		fmt.Fprintf(w, "  context     not estimated: %s\n", r.EstimateError)
	}
	if r.TokensBefore != nil && r.TokensAfter != nil {
		fmt.Fprintf(w, "  context     about %s -> %s tokens on resume (cl100k estimate)\n", ui.Count(r.TokensBefore.Tokens), ui.Count(r.TokensAfter.Tokens))
	}
	if r.TailBytes > 0 {
		fmt.Fprintf(w, "  appended    %s written by Claude Code during the purge carried over\n", ui.Bytes(r.TailBytes))
	}
	if r.Swaps > 1 {
		fmt.Fprintf(w, "  in order    lines appended during the rename were put in their place (%d renames)\n", r.Swaps)
	}
	printStaleTemps(w, r)
	if r.Backup != "" {
		fmt.Fprintf(w, "  backup      %s (ccm restore --backup %s)\n", r.Backup, r.Path)
	}
	printWriters(w, r.Holders, r.Backup, verbose)
	switch {
	case len(r.Plan) == 0 || verbose:
	case inBatch:
		fmt.Fprintf(w, "  plan        %s steps\n", ui.Count(len(r.Plan)))
	default:
		fmt.Fprintf(w, "  plan        %s steps (-v lists them)\n", ui.Count(len(r.Plan)))
	}
	if r.DryRun {
		fmt.Fprintf(w, "  (dry run: nothing was written)\n")
	}
	if verbose {
		printPlan(w, r.Plan)
	}
}

// sizeChange words the size before and after a purge: what it saved, or,
// when the file grew, by how much and why. A negative saving reads like a
// bug.
func sizeChange(r *purge.Report) string {
	from, to := ui.Bytes(r.BytesBefore), ui.Bytes(r.BytesAfter)
	if r.BytesAfter > r.BytesBefore {
		return fmt.Sprintf("%s -> %s (grew by %s: %s)", from, to, ui.Bytes(r.BytesAfter-r.BytesBefore), growthReason(r))
	}
	saved := r.BytesBefore - r.BytesAfter
	return fmt.Sprintf("%s -> %s (%s saved, %s)", from, to, ui.Bytes(saved), ui.Percent(saved, r.BytesBefore))
}

// growthReason says what made a purged file larger than it was: records
// the purge added, records it lengthened, or lines Claude Code appended
// meanwhile.
func growthReason(r *purge.Report) string {
	s := r.Stats
	var why []string
	if s.SynthesizedResults > 0 {
		why = append(why, "repairs added records")
	} else if repairCount(s) > 0 {
		why = append(why, "repairs lengthened records")
	}
	if s.Injected {
		why = append(why, "the injected compaction added records")
	}
	if r.TailBytes > 0 {
		why = append(why, "Claude Code appended during the purge")
	}
	if len(why) == 0 {
		return "rewritten records are longer"
	}
	return strings.Join(why, ", ")
}

// printStaleTemps mentions the temp files an interrupted ccm run had left
// beside the transcript, which the purge removed.
func printStaleTemps(w io.Writer, r *purge.Report) {
	if r.StaleTemps > 0 {
		fmt.Fprintf(w, "  temp files  removed %d left by an interrupted ccm run (.%s.ccm-tmp-*)\n", r.StaleTemps, filepath.Base(r.Path))
	}
}

// repairCount adds up the repairs of a purge.
func repairCount(s purge.Stats) int {
	n := s.RelinkedDangling + s.RootedDangling + s.BrokenCycles + s.SynthesizedResults + s.RemovedOrphanResult + s.DroppedEmpty + s.RemovedEmptyText + s.RemovedBrokenThinking + s.RenamedDuplicateIDs
	if s.AddedNewline {
		n++
	}
	return n
}

// repairParts lists the repairs a purge made, one phrase each.
func repairParts(s purge.Stats) []string {
	var out []string
	for _, r := range []struct {
		n    int
		what string
	}{
		{s.RelinkedDangling, "dangling parents relinked"},
		{s.RootedDangling, "records with a missing parent and nothing before them made roots"},
		{s.BrokenCycles, "parent loops broken"},
		{s.SynthesizedResults, "missing tool results added"},
		{s.RemovedOrphanResult, "orphan tool results removed"},
		{s.RenamedDuplicateIDs, "duplicate tool ids renamed"},
		{s.DroppedEmpty, "empty records removed"},
		{s.RemovedEmptyText, "empty text blocks removed"},
		{s.RemovedBrokenThinking, "unsigned or placeholder-signed thinking blocks removed"},
	} {
		if r.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", r.n, r.what))
		}
	}
	if s.AddedNewline {
		out = append(out, "newline added after the last record")
	}
	return out
}

// printWriters says where what may still be written to a replaced file
// goes: a process that still held it open (not Claude Code, which opens
// the transcript by its path for every line) writes to the file kept for
// it; where the system cannot tell who has the file open, the old file of
// a session written to lately is kept too. verbose also says when the
// system could not tell.
func printWriters(w io.Writer, h rewrite.Holders, backup string, verbose bool) {
	where := strings.Join(h.Kept, ", ")
	goes := "goes to " + where + ", not to the transcript"
	switch {
	case h.Unnamed && where == "":
		goes = "goes to the replaced file, which has no name left (no hard links on this filesystem), and is lost"
	case h.Unnamed:
		goes += "; the rest goes to a replaced file with no name left (no hard links on this filesystem), and is lost"
	}
	switch {
	case len(h.HeldOpen) > 0:
		who, has, it := "process", "has", "it writes"
		if len(h.HeldOpen) > 1 {
			who, has, it = "processes", "have", "they write"
		}
		fmt.Fprintf(w, "  warning     %s %s still %s the old file open for writing: what %s now %s\n", who, joinInts(h.HeldOpen), has, it, goes)
	case h.StillWritten || h.Unnamed:
		fmt.Fprintf(w, "  warning     the old file was still being written to (this system cannot tell by which process): what is written to it now %s\n", goes)
	case len(h.Kept) > 0 && (len(h.Kept) > 1 || h.Kept[0] != backup):
		fmt.Fprintf(w, "  old file    kept as %s: this system cannot tell whether a process still writes to it, and it was written to lately; lines written to it since are there\n", where)
	}
	if h.Blind && verbose {
		fmt.Fprintf(w, "  writers     this system cannot tell which processes have the file open (no /proc, or CCM_LIVE_DETECT=portable): a recent modification time made it live, and the wait for appends watched its size\n")
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// printPlan prints a dry run's plan, a step a line: the line of the
// original file, the action, where in the record, and why. It comes after
// the summary, which a plan of thousands of steps would push off screen.
func printPlan(w io.Writer, steps []purge.Step) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintf(w, "  plan        %s steps\n", ui.Count(len(steps)))
	for _, s := range steps {
		where := s.Where
		if s.Action == "stub" {
			where = fmt.Sprintf("%s (%s) -> %s", s.Where, ui.Bytes(s.Bytes), s.Key)
		}
		if where != "" {
			where += ": "
		}
		fmt.Fprintf(w, "    line %-7d %-8s %s%s\n", s.Line, s.Action, where, s.Why)
	}
}
