package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// peekCase writes a transcript made of lines and peeks it.
func peekCase(t *testing.T, lines ...string) Peek {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := PeekFile(path, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bigToolResult is a user record of about n bytes that is not a prompt.
func bigToolResult(n int) string {
	return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("x", n) + `"}]}}`
}

const (
	firstRecord = `{"type":"user","cwd":"/home/u/my proj/café","sessionId":"s1","message":{"role":"user","content":"fix the café bug"}}`
	lastUsage   = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":34}}}`
	aiTitle     = `{"type":"ai-title","aiTitle":"Café bug"}`
)

// A small file is read whole: the records are counted exactly.
func TestPeekSmallFileExact(t *testing.T) {
	p := peekCase(t, firstRecord, lastUsage, "", aiTitle)
	if p.Cwd != "/home/u/my proj/café" || p.FirstPrompt != "fix the café bug" || p.Context != 1244 || p.Title != "Café bug" {
		t.Errorf("peek = %+v", p)
	}
	if p.Records != 3 || p.RecordsEstimated {
		t.Errorf("records = %d (estimated %v), want exactly 3", p.Records, p.RecordsEstimated)
	}
}

// The windows grow past records longer than themselves: an 800 KB tool
// result before the first prompt and another after the last usage, so
// the records sought lie only in the last round's new bytes (16, 64,
// 256 KB, then 1 MB); the middle of the file is never needed.
func TestPeekGrowsPastLongRecords(t *testing.T) {
	cwdOnly := `{"type":"system","cwd":"/home/u/my proj/café","sessionId":"s1"}`
	middle := make([]string, 0, 200)
	for i := 0; i < 200; i++ {
		middle = append(middle, bigToolResult(10_000))
	}
	lines := append([]string{cwdOnly, bigToolResult(800_000), firstRecord}, middle...)
	lines = append(lines, aiTitle, lastUsage, bigToolResult(800_000))
	p := peekCase(t, lines...)
	if p.Cwd != "/home/u/my proj/café" || p.FirstPrompt != "fix the café bug" {
		t.Errorf("head: cwd %q, prompt %q", p.Cwd, p.FirstPrompt)
	}
	if p.Context != 1244 || p.Title != "Café bug" {
		t.Errorf("tail: context %d, title %q", p.Context, p.Title)
	}
	if !p.RecordsEstimated || p.Records <= 0 {
		t.Errorf("records = %d (estimated %v), want an estimate", p.Records, p.RecordsEstimated)
	}
}

// A first line longer than maxHead stops the head's growth there: the
// row has no prompt, and the tail is still read.
func TestPeekHeadBounded(t *testing.T) {
	p := peekCase(t, bigToolResult(maxHead+1000), firstRecord, lastUsage)
	if p.FirstPrompt != "" || p.Cwd != "" {
		t.Errorf("head beyond maxHead was read: %+v", p)
	}
	if p.Context != 1244 {
		t.Errorf("context = %d, want 1244", p.Context)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  fix\n\tthe  café bug \n", 200, "fix the café bug"},
		{"abcde", 5, "abcde"},
		{"abcdef", 5, "abcd…"},
		{"ab  cd", 5, "ab cd"},
		{"ab  cd ", 5, "ab cd"},
		{"ab  cde", 5, "ab c…"},
		{"ééééé\u00a0é", 6, "ééééé…"},
		{"   ", 5, ""},
		{strings.Repeat("word ", 100_000), 10, "word word…"},
	} {
		if got := oneLine(c.in, c.n); got != c.want {
			t.Errorf("oneLine(%.20q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
