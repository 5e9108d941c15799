package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// TestMembersOpenSameAsMembers: on every record of generated transcripts
// (and of the corpus when it is there) and on hand-written edge cases,
// MembersOpen finds what Members finds; the value it leaves open starts
// where Members' does and runs on to the end of the record.
func TestMembersOpenSameAsMembers(t *testing.T) {
	keys := []string{"isSidechain", "type", "message"}
	records := []string{
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]},"uuid":"u"}`,
		`{"message":{"id":"m"},"type":"assistant"}`,
		`{"type":"user","message":"plain text"}`,
		`{"type":"user","isSidechain":true,"message":[1,2]}`,
		`{"isSidechain":false,"type":"user"}`,
		`{"t\u0079pe":"user","type":"x","message":{}}`,
		`{"message":{"a":1},"message":{"b":2},"type":"user","isSidechain":false}`,
		`{}`,
		`[]`,
	}
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Options{Seed: 3, Turns: 6, Version: "2.1.330", Progress: true, Thinking: true, Sidechains: true, Compactions: 1}); err != nil {
		t.Fatal(err)
	}
	records = append(records, strings.Split(strings.TrimSpace(buf.String()), "\n")...)
	if shared, ok := testutil.LookupShared(t); ok {
		files, _ := filepath.Glob(filepath.Join(shared, "corpus", "claude-config", "projects", "*", "*.jsonl"))
		for _, p := range files[:min(len(files), 10)] {
			data, _ := os.ReadFile(p)
			for _, l := range strings.Split(string(data), "\n") {
				if ValidJSON([]byte(l)) {
					records = append(records, l)
				}
			}
		}
	}
	opened := 0
	for _, rec := range records {
		var want, got [3]gjson.Result
		Members(rec, keys, want[:])
		MembersOpen(rec, keys, got[:])
		for i := range keys {
			w, g := want[i], got[i]
			if g.Type != w.Type || g.Index != w.Index || !strings.HasPrefix(g.Raw, w.Raw) {
				t.Fatalf("%.80s: %s: got %v %d %.40q, want %v %d %.40q", rec, keys[i], g.Type, g.Index, g.Raw, w.Type, w.Index, w.Raw)
			}
			if g.Raw != w.Raw {
				if g.Raw != rec[g.Index:] {
					t.Fatalf("%.80s: %s left open but not to the record's end", rec, keys[i])
				}
				opened++
			}
		}
	}
	if opened == 0 {
		t.Error("no value was left open: the test checks nothing of it")
	}
}
