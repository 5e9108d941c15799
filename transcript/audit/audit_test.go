package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func use(id, name, input string) string {
	return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]}}`, id, name, input)
}

func result(id string, n int) string {
	return fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}}`, id, strings.Repeat("x", n))
}

func TestKey(t *testing.T) {
	cases := map[string]string{
		`{"command":"git diff --stat"}`:          "Bash git diff",
		`{"command":"cd /src && go test ./..."}`: "Bash go test",
		`{"command":"FOO=1 cat big.log | head"}`: "Bash cat",
		`{"command":"git -C x log"}`:             "Bash git",
		`{"command":""}`:                         "Bash",
	}
	for in, want := range cases {
		if got := Key("Bash", gjson.Parse(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	if got := Key("mcp__github__search_code", gjson.Parse(`{}`)); got != "MCP github" {
		t.Errorf("mcp: %q", got)
	}
}

// TestUpdateIncremental: counts per consumer across reads, a record still
// being written waits for the next read, a compact boundary starts over,
// and a file that shrank is read again.
func TestUpdateIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	write := func(lines ...string) {
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		defer f.Close()
		for _, l := range lines {
			f.WriteString(l)
		}
	}
	update := func(a *Audit) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := a.Update(f, false); err != nil {
			t.Fatal(err)
		}
	}
	write(use("t1", "Read", `{"file_path":"/a"}`)+"\n", result("t1", 8000)+"\n",
		use("t2", "Bash", `{"command":"go test ./..."}`)+"\n", result("t2", 3000)+"\n")
	a := New()
	update(a)
	if a.Total != 11000 || a.Consumers["Read"].Bytes != 8000 || a.Consumers["Bash go test"].Bytes != 3000 || a.PurgeableCount != 2 {
		t.Fatalf("first read: total %d, %+v", a.Total, a.Top(5))
	}
	write(use("t3", "Read", `{"file_path":"/b"}`)+"\n", result("t3", 1000)[:50]) // torn: still being written
	update(a)
	if a.Consumers["Read"].Count != 1 {
		t.Fatalf("a half-written result was counted")
	}
	write(result("t3", 1000)[50:] + "\n")
	update(a)
	if a.Consumers["Read"].Count != 2 || a.Consumers["Read"].Bytes != 9000 {
		t.Fatalf("after the rest: %+v", *a.Consumers["Read"])
	}
	write(`{"type":"system","subtype":"compact_boundary","isSidechain":false}`+"\n", use("t4", "Grep", `{}`)+"\n", result("t4", 500)+"\n")
	update(a)
	if a.Total != 500 || a.Consumers["Read"] != nil {
		t.Fatalf("after a boundary: total %d, %v", a.Total, a.Top(5))
	}
	os.WriteFile(path, []byte(use("t5", "Glob", `{}`)+"\n"+result("t5", 10)+"\n"), 0o600)
	update(a)
	if a.Total != 10 || a.Consumers["Glob"] == nil {
		t.Fatalf("after a rewrite: total %d, %v", a.Total, a.Top(5))
	}
}

func TestReportAndSuggestion(t *testing.T) {
	a := New()
	a.add("Read", 60000)
	a.add("Bash go test", 30000)
	a.add("Grep", 1000)
	r := a.Report(5)
	if !strings.Contains(r, "Read: 60.0 KB, ~15,000 tokens (66%, 1 call)") || !strings.Contains(r, "Bash go test: 30.0 KB") {
		t.Errorf("report:\n%s", r)
	}
	s := a.Suggestion(5)
	if !strings.Contains(s, "/compact drop the raw outputs of Read, Bash go test;") || strings.Contains(s, "Grep") ||
		!strings.Contains(s, "would save at least 89.2 KB (~22,300 tokens)") || !strings.Contains(s, "2 tool outputs over 1.0 KB from before the last 2 prompts") {
		t.Errorf("suggestion: %s", s)
	}
}

// TestPurgeEstimate: outputs after the last two prompts stay out of the
// estimate (a purge leaves that window as it is) and join it once a third
// prompt pushes them before the window; outputs of 1,000 bytes or less
// never count.
func TestPurgeEstimate(t *testing.T) {
	prompt := func(s string) string {
		return fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":%q}}`, s)
	}
	a := New()
	feed := func(lines ...string) {
		f := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
		fh, _ := os.Open(f)
		defer fh.Close()
		b := New()
		if err := b.Update(fh, true); err != nil {
			t.Fatal(err)
		}
		*a = *b
	}
	lines := []string{use("t0", "Read", `{}`), result("t0", 20000), // before any prompt
		prompt("one"), use("t1", "Read", `{}`), result("t1", 10000), use("t2", "Grep", `{}`), result("t2", 1000),
		prompt("two"), use("t3", "Bash", `{"command":"ls"}`), result("t3", 3000),
		prompt("three"), use("t4", "Read", `{}`), result("t4", 50000)}
	feed(lines...)
	// t0 and t1 are before the window (prompt "two" starts it); t2 is not
	// over the threshold; t3 and t4 are in the window.
	if want := int64(20000 - StubBytes + 10000 - StubBytes); a.Purgeable != want || a.PurgeableCount != 2 {
		t.Errorf("estimate %d bytes in %d outputs, want %d in 2", a.Purgeable, a.PurgeableCount, want)
	}
	feed(append(lines, prompt("four"))...)
	if want := int64(20000 + 10000 + 3000 - 3*StubBytes); a.Purgeable != want || a.PurgeableCount != 3 {
		t.Errorf("after a fourth prompt: %d bytes in %d outputs, want %d in 3", a.Purgeable, a.PurgeableCount, want)
	}
}

// TestUpdateMappedSameAsStreamed: the hook's read (the file's end mapped
// into memory) and ccm audit's (streamed, no limit) count the same from
// a file with records before and after its last compact boundary, and
// the counts outlive the mapping.
func TestUpdateMappedSameAsStreamed(t *testing.T) {
	boundary := `{"type":"system","subtype":"compact_boundary","isSidechain":false}`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := []string{use("t1", "Read", `{"file_path":"/a"}`), result("t1", 8000), boundary,
		use("t2", "Bash", `{"command":"git status"}`), result("t2", 3000), use("t3", "mcp__github__list", `{}`), result("t3", 2500),
		use("t4", "Bash", `{"command":"go test ./..."}`), result("t4", 700)}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"+use("t5", "Grep", `{}`)), 0o600) // the last line still being written
	var got [2]*Audit
	for i, whole := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = New()
		if err := got[i].Update(f, whole); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if got[0].Total != 6200 || got[0].Consumers["MCP github"] == nil || got[0].Consumers["Bash git status"].Bytes != 3000 {
		t.Fatalf("mapped read: total %d, %v", got[0].Total, got[0].Top(5))
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("mapped %+v\nstreamed %+v", *got[0], *got[1])
	}
}
