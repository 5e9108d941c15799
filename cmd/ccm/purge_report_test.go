package main

import (
	"strings"
	"testing"

	"ccm/purge"
	"ccm/transcript/rewrite"
)

// TestSizeChange: a purge that saved bytes says how many; one that grew
// the file says by how much and what made it grow, never a negative
// saving.
func TestSizeChange(t *testing.T) {
	for _, c := range []struct {
		r    purge.Report
		want string
	}{
		{purge.Report{BytesBefore: 2000, BytesAfter: 500}, "2.0 KB -> 500 B (1.5 KB saved, 75.0%)"},
		{purge.Report{BytesBefore: 500, BytesAfter: 500}, "500 B -> 500 B (0 B saved, 0.0%)"},
		{purge.Report{BytesBefore: 1000, BytesAfter: 1642, Stats: purge.Stats{SynthesizedResults: 1}},
			"1.0 KB -> 1.6 KB (grew by 642 B: repairs added records)"},
		{purge.Report{BytesBefore: 900, BytesAfter: 930, Stats: purge.Stats{RelinkedDangling: 1}},
			"900 B -> 930 B (grew by 30 B: repairs lengthened records)"},
		{purge.Report{BytesBefore: 900, BytesAfter: 5000, Stats: purge.Stats{Injected: true, SynthesizedResults: 2}},
			"900 B -> 5.0 KB (grew by 4.1 KB: repairs added records, the injected compaction added records)"},
		{purge.Report{BytesBefore: 900, BytesAfter: 2900, TailBytes: 2100},
			"900 B -> 2.9 KB (grew by 2.0 KB: Claude Code appended during the purge)"},
		{purge.Report{BytesBefore: 900, BytesAfter: 901}, "900 B -> 901 B (grew by 1 B: rewritten records are longer)"},
	} {
		if got := sizeChange(&c.r); got != c.want {
			t.Errorf("sizeChange(%d -> %d) = %q, want %q", c.r.BytesBefore, c.r.BytesAfter, got, c.want)
		}
	}
}

// TestHeldOpenWarning: processes that kept the replaced file open are
// named, with where their writes now go; a writer the system could not
// name, and an old file kept where the system cannot tell, are said too,
// never with a place the lines are not in.
func TestHeldOpenWarning(t *testing.T) {
	report := func(h rewrite.Holders, backup string, verbose bool) string {
		var b strings.Builder
		printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5, Backup: backup, Holders: h}, verbose, false)
		return b.String()
	}
	for _, c := range []struct {
		h       rewrite.Holders
		backup  string
		verbose bool
		want    string
	}{
		{rewrite.Holders{HeldOpen: []int{41, 42}, Kept: []string{"s.jsonl.backup.1"}}, "s.jsonl.backup.1", false,
			"  warning     processes 41, 42 still have the old file open for writing: what they write now goes to s.jsonl.backup.1, not to the transcript\n"},
		{rewrite.Holders{HeldOpen: []int{41}, Kept: []string{"s.jsonl.backup.1-1-held"}}, "s.jsonl.backup.1.zst", false,
			"  warning     process 41 still has the old file open for writing: what it writes now goes to s.jsonl.backup.1-1-held, not to the transcript\n"},
		{rewrite.Holders{StillWritten: true, Blind: true, Kept: []string{"s.jsonl.backup.1-held"}}, "", false,
			"  warning     the old file was still being written to (this system cannot tell by which process): what is written to it now goes to s.jsonl.backup.1-held, not to the transcript\n"},
		{rewrite.Holders{Blind: true, Kept: []string{"s.jsonl.backup.1-held"}}, "s.jsonl.backup.1", false,
			"  old file    kept as s.jsonl.backup.1-held: this system cannot tell whether a process still writes to it, and it was written to lately; lines written to it since are there\n"},
		{rewrite.Holders{Blind: true}, "s.jsonl.backup.1", true, "  writers     this system cannot tell which processes have the file open"},
		{rewrite.Holders{HeldOpen: []int{41}, Unnamed: true}, "s.jsonl.backup.1.zst", false,
			"  warning     process 41 still has the old file open for writing: what it writes now goes to the replaced file, which has no name left (no hard links on this filesystem), and is lost\n"},
	} {
		if got := report(c.h, c.backup, c.verbose); !strings.Contains(got, c.want) {
			t.Errorf("report:\n%s\nwants the line:\n%s", got, c.want)
		}
	}
	// Nothing to say: nothing held, or the old file kept is the backup
	// the report names already; the blind note only with -v.
	for _, h := range []rewrite.Holders{{}, {Blind: true, Kept: []string{"s.jsonl.backup.1"}}} {
		if got := report(h, "s.jsonl.backup.1", false); strings.Contains(got, "warning") || strings.Contains(got, "old file") || strings.Contains(got, "writers") {
			t.Errorf("%+v: a line about writers:\n%s", h, got)
		}
	}
}

// TestCompactedLine: the microcompaction rules each have a count in the
// report, and none shows when no rule stubbed anything.
func TestCompactedLine(t *testing.T) {
	var b strings.Builder
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5,
		Stats: purge.Stats{Stubs: 9, StaleReads: 3, DuplicateOutputs: 2, OldTodos: 1, ReplayedHooks: 4}}, false, false)
	want := "  compacted   3 stale reads, 2 duplicate outputs, 1 superseded todo lists, 4 replayed hook contexts (among the stubs)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwants the line:\n%s", b.String(), want)
	}
	b.Reset()
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5, Stats: purge.Stats{Stubs: 1}}, false, false)
	if strings.Contains(b.String(), "compacted") {
		t.Errorf("a compacted line with nothing compacted:\n%s", b.String())
	}
}
