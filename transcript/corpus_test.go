package transcript

import (
	"os"
	"testing"

	"ccm/internal/testutil"
)

func indexCorpus(t *testing.T, rel string) *Index {
	t.Helper()
	f, err := os.Open(testutil.CorpusFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix, err := Build(f, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func typeCounts(ix *Index) map[string]int {
	m := map[string]int{}
	for ri := range ix.Len() {
		f := ix.Rec(ri)
		m[f.TypeName()]++
	}
	return m
}

func blockCounts(ix *Index) map[string]int {
	m := map[string]int{}
	for ri := range ix.Len() {
		f := ix.Rec(ri)
		for _, b := range f.Blocks() {
			m[b.Type.String()]++
		}
	}
	return m
}

func sameCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s[%s] = %d, want %d (all: %v)", what, k, got[k], v, got)
		}
	}
}

// The expected figures below were counted by hand with an independent
// walk in Python over the corpus files (json.loads per line, a naive
// parentUuid walk from the last main-chain user/assistant record), and
// agree with docs/transcript-format.md, "Seen in the corpus".
func TestCorpusCounts(t *testing.T) {
	tests := []struct {
		rel       string
		lines     int
		types     map[string]int
		blocks    map[string]int
		dangling  int
		walk      int // records on the walk, without attached results
		startLine int
		endLine   int
		boundary  bool
	}{
		{testutil.Spotter, 1512,
			map[string]int{"progress": 1083, "assistant": 254, "user": 154, "file-history-snapshot": 14, "system": 6, "queue-operation": 1},
			map[string]int{"text": 90, "thinking": 14, "tool_use": 150, "tool_result": 150},
			0, 231, 1507, 754, true},
		{testutil.SpotterAgent, 144,
			map[string]int{"user": 34, "assistant": 40, "progress": 70},
			map[string]int{"text": 7, "tool_use": 33, "tool_result": 33},
			0, 73, 144, 1, false},
		{testutil.Acompact, 5,
			map[string]int{"user": 4, "assistant": 1},
			map[string]int{"text": 1},
			3, 3, 5, 3, false},
		{testutil.Demo, 438,
			map[string]int{"summary": 1, "user": 175, "assistant": 262},
			map[string]int{"text": 96, "tool_use": 167, "tool_result": 167},
			0, 32, 438, 2, false},
		{testutil.FlatAgent, 8,
			map[string]int{"user": 3, "assistant": 5},
			map[string]int{"text": 3, "tool_use": 2, "tool_result": 2},
			0, 8, 8, 1, false},
		{testutil.MetaOnly, 8,
			map[string]int{"summary": 3, "file-history-snapshot": 5},
			map[string]int{},
			0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			ix := indexCorpus(t, tt.rel)
			if ix.Lines != tt.lines || ix.Len() != tt.lines {
				t.Errorf("lines %d, records %d, want %d of each", ix.Lines, ix.Len(), tt.lines)
			}
			sameCounts(t, "types", typeCounts(ix), tt.types)
			sameCounts(t, "blocks", blockCounts(ix), tt.blocks)
			if got := len(ix.Dangling()); got != tt.dangling {
				t.Errorf("dangling parents %d, want %d", got, tt.dangling)
			}
			c := ix.ActiveChain()
			if len(c.Recs) != tt.walk {
				t.Fatalf("walk %d records, want %d", len(c.Recs), tt.walk)
			}
			if tt.walk == 0 {
				return
			}
			if got := int(ix.Rec(c.Start).Line); got != tt.startLine {
				t.Errorf("walk starts at line %d, want %d", got, tt.startLine)
			}
			if got := int(ix.Rec(c.Recs[0]).Line); got != tt.endLine {
				t.Errorf("walk ends at line %d, want %d", got, tt.endLine)
			}
			if (c.Boundary >= 0) != tt.boundary {
				t.Errorf("boundary %v, want %v", c.Boundary >= 0, tt.boundary)
			}
		})
	}
}

// TestCorpusParallelResultAttached pins the one off-walk tool result of the
// 2.1.39 file (docs/transcript-format.md, "Seen in the corpus"): it hangs off
// the first tool_use line of a split message and is attached by tool id.
func TestCorpusParallelResultAttached(t *testing.T) {
	ix := indexCorpus(t, testutil.Spotter)
	c := ix.ActiveChain()
	if len(c.Attached) != 1 {
		t.Fatalf("attached %d records, want 1", len(c.Attached))
	}
	a := ix.Rec(c.Attached[0])
	if a.Type != TypeUser || a.Block(0).Type != BlockToolResult {
		t.Fatalf("attached record is %s, want a user tool_result", a.TypeName())
	}
	// Everything after the boundary is reached: 217 user/assistant records.
	reached := 0
	for i := range ix.Len() {
		if ix.Rec(i).IsConversation() && c.Reached(i) {
			reached++
		}
	}
	if reached != 217 {
		t.Errorf("reached %d user/assistant records, want 217", reached)
	}
	if off := ix.OffChainRecords(c); len(off.BeforeBoundary) != 191 || len(off.OtherBranch) != 0 {
		t.Errorf("off chain: %d before the boundary, %d on branches; want 191 and 0", len(off.BeforeBoundary), len(off.OtherBranch))
	}
}

// TestCorpusCheck: every corpus file resumes (the real client confirmed
// it, docs/transcript-format.md), so Check finds no error. The subagent
// compaction file's dangling parents are expected there, but are errors
// when the same file is checked as a main session.
func TestCorpusCheck(t *testing.T) {
	for _, rel := range []string{testutil.Spotter, testutil.SpotterAgent, testutil.Acompact, testutil.Demo, testutil.FlatAgent, testutil.MetaOnly} {
		ix := indexCorpus(t, rel)
		fs := Check(ix, CheckOptions{Subagent: IsSubagentPath(rel)})
		for _, f := range fs {
			// The spotter fixture's placeholder signatures are errors,
			// counted below.
			if f.Severity == Error && f.Code != "thinking-fake-signature" {
				t.Errorf("%s:%d: unexpected error %s: %s", rel, f.Line, f.Code, f.Text)
			}
		}
	}
	ix := indexCorpus(t, testutil.Spotter)
	fake := 0
	for _, f := range Check(ix, CheckOptions{}) {
		if f.Code == "thinking-fake-signature" && f.Severity == Error {
			fake++
		}
	}
	// 14 thinking blocks carry "[REDACTED_SIGNATURE]"; 6 are on the chain
	// (the real client sent 6, docs/transcript-format.md).
	if fake != 6 {
		t.Errorf("fake signatures on the chain: %d, want 6", fake)
	}
	ix = indexCorpus(t, testutil.Acompact)
	// Lines 1 to 3 name parents in the main session. Line 1 has nothing
	// before it (the walk loses nothing there); lines 2 and 3 would lose
	// the records before them.
	fs := Check(ix, CheckOptions{Subagent: false})
	midway := 0
	for _, f := range fs {
		if f.Code == "starts-midway" {
			midway++
			if f.Line != 1 || f.Severity != Warning {
				t.Errorf("starts-midway finding at line %d, severity %v; want line 1, a warning", f.Line, f.Severity)
			}
		}
	}
	if n := Errors(fs); n != 2 || midway != 1 {
		t.Errorf("acompact checked as a main file: %d errors and %d starts-midway warnings, want 2 dangling parents (lines 2, 3) and 1", n, midway)
	}
}
