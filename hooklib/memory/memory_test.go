package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func newStore(t *testing.T, max int) *Store {
	return &Store{Path: filepath.Join(t.TempDir(), "m", "tool-memory.ndjson"), Max: max}
}

func entry(tool, input, err string) Entry {
	return Entry{TS: "2026-11-24T10:00:00Z", Tool: tool, Input: input, Error: err, Project: "/p"}
}

// TestRecordDedupesAndBounds: a lesson already stored is kept once (moved
// to the end, counted); past Max the oldest go first.
func TestRecordDedupesAndBounds(t *testing.T) {
	s := newStore(t, 3)
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if added, err := s.Record(ctx, entry("Bash", fmt.Sprintf("cmd %d", i), "boom")); err != nil || !added {
			t.Fatal(added, err)
		}
	}
	all, _ := s.List()
	if len(all) != 3 || all[0].Input != "cmd 1" || all[2].Input != "cmd 3" {
		t.Fatalf("kept %+v", all)
	}
	if added, _ := s.Record(ctx, entry("Bash", "cmd 1", "boom")); added {
		t.Error("duplicate counted as new")
	}
	all, _ = s.List()
	if len(all) != 3 || all[2].Input != "cmd 1" || all[2].Count != 2 || all[0].Input != "cmd 2" {
		t.Errorf("after duplicate: %+v", all)
	}
	if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v %v", fi.Mode(), err)
	}
	if n, err := s.Clear(ctx); n != 3 || err != nil {
		t.Errorf("clear %d %v", n, err)
	}
	if all, _ := s.List(); len(all) != 0 {
		t.Error("not cleared")
	}
}

// TestLegacyAndTornLines: agentihooks' records (no project, no hash)
// are read and match every project; a torn last line is skipped and the
// next lesson still lands on a line of its own.
func TestLegacyAndTornLines(t *testing.T) {
	s := newStore(t, 100)
	os.MkdirAll(filepath.Dir(s.Path), 0o700)
	legacy := `{"ts":"2026-04-03T14:22:00Z","tool":"Bash","error":"Permission denied: /var/run/docker.sock","input":"docker ps -a","session":"x"}` + "\n" +
		`{"ts":"2026-04-05T09:14:00Z","tool":"mcp__anton__ssh","error":"Connection refused","input":"host=192.168.1.10","session":"x"}` + "\n" +
		`{"ts":"2026-04-06T22:38:00Z","tool":"Bash","err`
	os.WriteFile(s.Path, []byte(legacy), 0o600)
	if _, err := s.Record(context.Background(), entry("Bash", "kubectl get pods", "kubectl: command not found")); err != nil {
		t.Fatal(err)
	}
	all, _ := s.List()
	if len(all) != 3 || all[2].Input != "kubectl get pods" {
		t.Fatalf("%+v", all)
	}
	got, _ := s.Lessons("Bash", "/elsewhere", 15, nil)
	if len(got) != 1 || got[0].Input != "docker ps -a" {
		t.Errorf("legacy lesson for any project: %+v", got)
	}
	if l := got[0].Line(); l != "[2026-04-03 14:22] Bash -- Permission denied: /var/run/docker.sock (input: docker ps -a)" {
		t.Errorf("line %q", l)
	}
}

// TestLessonsFilter: only the tool's lessons (agentihooks showed a Bash
// error on the first Read), only this project's, not those already shown,
// newest n, newest last.
func TestLessonsFilter(t *testing.T) {
	s := newStore(t, 100)
	ctx := context.Background()
	s.Record(ctx, entry("Bash", "a", "e1"))
	s.Record(ctx, entry("Read", "/x", "e2"))
	other := entry("Bash", "b", "e3")
	other.Project = "/other"
	s.Record(ctx, other)
	s.Record(ctx, entry("Bash", "c", "e4"))
	s.Record(ctx, entry("Bash", "d", "e5"))
	got, _ := s.Lessons("Bash", "/p", 2, nil)
	if len(got) != 2 || got[0].Input != "c" || got[1].Input != "d" {
		t.Errorf("%+v", got)
	}
	got, _ = s.Lessons("Bash", "/p", 15, map[string]bool{Hash("Bash", "d", "e5"): true})
	if len(got) != 2 || got[0].Input != "a" || got[1].Input != "c" {
		t.Errorf("seen not left out: %+v", got)
	}
	if got, _ := s.Lessons("Write", "/p", 15, nil); len(got) != 0 {
		t.Errorf("other tool: %+v", got)
	}
}

func TestResultErrorAndSummary(t *testing.T) {
	for raw, want := range map[string]string{
		`{"is_error":true,"content":"File not found"}`:                                   "File not found",
		`{"isError":true,"content":[{"type":"text","text":"Connection refused\nat x"}]}`: "Connection refused\nat x",
		`{"exitCode":2,"stderr":"","stdout":"make: *** [all] Error 2"}`:                  "make: *** [all] Error 2",
		`{"stdout":"no errors found","stderr":""}`:                                       "",
		`{"is_error":false,"content":"error handling works"}`:                            "",
		`"Error: something"`: "",
	} {
		got, ok := ResultError(gjson.Parse(raw))
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v", raw, got, ok)
		}
	}
	for raw, want := range map[string]string{
		`{"command":"ls /x","description":"list"}`:              "ls /x",
		`{"jql":"project = X"}`:                                 "project = X",
		`{"host":"` + strings.Repeat("h", 200) + `","port":22}`: "port=22",
		`{"file_path":"/a/b.go","content":"x"}`:                 "/a/b.go",
	} {
		if got := InputSummary(gjson.Parse(raw)); got != want {
			t.Errorf("%s: %q", raw, got)
		}
	}
	if got := ErrorText("Exit code 2\n\nls: cannot access 'x'\nthird\nfourth"); got != "Exit code 2\nls: cannot access 'x'\nthird" {
		t.Errorf("%q", got)
	}
}

// TestScanTranscriptFromOffset: failed MCP calls are found in the part
// written since the last scan; the next scan reads only what came after;
// a torn last line waits for the next scan.
func TestScanTranscriptFromOffset(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	call := func(id, name string) string {
		return `{"type":"assistant","timestamp":"2026-11-24T10:00:00.123Z","sessionId":"s","cwd":"/p","message":{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{"query":"select 1"}}]}}` + "\n"
	}
	result := func(id string, isErr bool) string {
		return fmt.Sprintf(`{"type":"user","timestamp":"2026-11-24T10:00:01.000Z","sessionId":"s","cwd":"/p","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","is_error":%v,"content":[{"type":"text","text":"Connection refused"}]}]}}`, id, isErr) + "\n"
	}
	turn1 := call("t1", "mcp__db__query") + result("t1", true) + call("t2", "Bash") + result("t2", true) + call("t3", "mcp__db__query") + result("t3", false)
	os.WriteFile(p, []byte(turn1), 0o600)
	found, next, err := ScanTranscript(p, 0)
	if err != nil || len(found) != 1 || found[0].Tool != "mcp__db__query" || found[0].Error != "Connection refused" ||
		found[0].Input != "select 1" || found[0].TS != "2026-11-24T10:00:01Z" || found[0].Project != "/p" || next != int64(len(turn1)) {
		t.Fatalf("%+v next=%d err=%v", found, next, err)
	}
	torn := call("t4", "mcp__db__query") + result("t4", true)
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn[:len(torn)-30])
	f.Close()
	found, next2, _ := ScanTranscript(p, next)
	if len(found) != 0 || next2 != next+int64(len(call("t4", "mcp__db__query"))) {
		t.Fatalf("torn line: %+v next=%d", found, next2)
	}
	f, _ = os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn[len(torn)-30:])
	f.Close()
	// The tool_use was read by the previous scan: the result alone is not
	// attributed (the scan keeps no state but its offset).
	found, next3, _ := ScanTranscript(p, next2)
	if len(found) != 0 || next3 != int64(len(turn1)+len(torn)) {
		t.Fatalf("after torn: %+v next=%d", found, next3)
	}
}

// TestScanFirstTimeReadsTheTail: the first scan of a large transcript
// reads only its last FirstScan bytes.
func TestScanFirstTimeReadsTheTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	early := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e","name":"mcp__x__y","input":{}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"e","is_error":true,"content":"old"}]}}` + "\n"
	filler := strings.Repeat(`{"type":"progress","data":"`+strings.Repeat("z", 1000)+`"}`+"\n", 2*FirstScan/1000)
	os.WriteFile(p, []byte(early+filler), 0o600)
	found, next, err := ScanTranscript(p, 0)
	if err != nil || len(found) != 0 || next != int64(len(early)+len(filler)) {
		t.Errorf("found %d next %d err %v", len(found), next, err)
	}
}

// TestSameFailureSeenTwice: an MCP failure recorded by PostToolUseFailure
// and found again by the Stop scan, where Claude Code appended advice to
// the error, is one lesson, with its first wording.
func TestSameFailureSeenTwice(t *testing.T) {
	s := newStore(t, 100)
	ctx := context.Background()
	s.Record(ctx, entry("mcp__t__fail", "host=10.0.0.1", "Connection refused: host unreachable"))
	again := entry("mcp__t__fail", "host=10.0.0.1", "Connection refused: host unreachable\nThis tool's input schema was not in your prompt when you called it.")
	if added, err := s.Record(ctx, again); added || err != nil {
		t.Fatal(added, err)
	}
	all, _ := s.List()
	if len(all) != 1 || all[0].Error != "Connection refused: host unreachable" || all[0].Count != 2 {
		t.Errorf("%+v", all)
	}
}

// TestScanSkipsLongLines: a line over maxScanLine is passed over (its
// failure is not looked at) and the scan goes on after it.
func TestScanSkipsLongLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	call := func(id string) string {
		return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"mcp__db__query","input":{}}]}}` + "\n"
	}
	result := func(id, text string) string {
		return `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `","is_error":true,"content":"` + text + `"}]}}` + "\n"
	}
	scanned := `{"type":"summary"}` + "\n" // up to an earlier scan's offset: no FirstScan window
	data := scanned + call("a") + result("a", strings.Repeat("x", maxScanLine)) + call("b") + result("b", "Connection refused")
	os.WriteFile(p, []byte(data), 0o600)
	found, next, err := ScanTranscript(p, int64(len(scanned)))
	if err != nil || len(found) != 1 || found[0].Error != "Connection refused" || next != int64(len(data)) {
		t.Fatalf("found %+v next %d of %d, err %v", found, next, len(data), err)
	}
}
