package main

import (
	"strings"
	"testing"

	"ccm/purge"
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
// named, with where their writes now go.
func TestHeldOpenWarning(t *testing.T) {
	var b strings.Builder
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5,
		Backup: "s.jsonl.backup.1", HeldOpen: []int{41, 42}}, false)
	want := "  warning     processes 41, 42 still have the old file open for writing: what they write now goes to s.jsonl.backup.1, not to the transcript\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwants the line:\n%s", b.String(), want)
	}
	b.Reset()
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5}, false)
	if strings.Contains(b.String(), "warning") {
		t.Errorf("a warning without holders:\n%s", b.String())
	}
}

// TestCompactedLine: the microcompaction rules each have a count in the
// report, and none shows when no rule stubbed anything.
func TestCompactedLine(t *testing.T) {
	var b strings.Builder
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5,
		Stats: purge.Stats{Stubs: 9, StaleReads: 3, DuplicateOutputs: 2, OldTodos: 1, ReplayedHooks: 4}}, false)
	want := "  compacted   3 stale reads, 2 duplicate outputs, 1 superseded todo lists, 4 replayed hook contexts (among the stubs)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report:\n%s\nwants the line:\n%s", b.String(), want)
	}
	b.Reset()
	printPurgeReport(&b, &purge.Report{Path: "s.jsonl", Changed: true, BytesBefore: 10, BytesAfter: 5, Stats: purge.Stats{Stubs: 1}}, false)
	if strings.Contains(b.String(), "compacted") {
		t.Errorf("a compacted line with nothing compacted:\n%s", b.String())
	}
}
