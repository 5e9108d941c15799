package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/purge"
	"ccm/transcript"
)

// rec builds one transcript line from a map (fixtures only: the code under
// test never decodes records this way).
func rec(t *testing.T, m map[string]any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "&" as written, as Claude Code writes it
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func use(in, cr, cc, out int) map[string]any {
	return map[string]any{"input_tokens": in, "cache_read_input_tokens": cr, "cache_creation_input_tokens": cc, "output_tokens": out}
}

func write(t *testing.T, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// handFixture is a small session whose figures are worked out by hand in
// TestCollectHandFixture.
func handFixture(t *testing.T) string {
	input := map[string]any{"command": "cd /x && go test ./..."} // 36 bytes as JSON
	big := strings.Repeat("X", 3000)
	return write(t, "11111111-2222-3333-4444-555555555555.jsonl", []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "timestamp": "2026-01-02T10:00:00Z",
			"message": map[string]any{"role": "user", "content": "hello"}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-02T10:00:05Z",
			"message": map[string]any{"id": "m1", "role": "assistant", "model": "claude-opus-4-6", "usage": use(10, 100, 50, 5),
				"content": []any{map[string]any{"type": "thinking", "thinking": "abcd", "signature": "EuYBCkQYAiJAqwertyuiopasdfghjkl"}}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a2", "parentUuid": "a1", "timestamp": "2026-01-02T10:00:06Z",
			"message": map[string]any{"id": "m1", "role": "assistant", "model": "claude-opus-4-6", "usage": use(10, 100, 50, 20),
				"content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": input}}}}),
		rec(t, map[string]any{"type": "user", "uuid": "r1", "parentUuid": "a2", "timestamp": "2026-01-02T10:00:09Z",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": big}}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a3", "parentUuid": "r1", "timestamp": "2026-01-02T10:00:12Z",
			"message": map[string]any{"id": "m2", "role": "assistant", "model": "claude-opus-4-6", "usage": use(5, 150, 900, 7),
				"content": []any{map[string]any{"type": "text", "text": "done"}}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "s1", "parentUuid": "a3", "isSidechain": true,
			"message": map[string]any{"id": "ms", "role": "assistant", "usage": use(1, 1, 1, 1),
				"content": []any{map[string]any{"type": "text", "text": "side"}}}}),
		rec(t, map[string]any{"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": nil,
			"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 1062}}),
		rec(t, map[string]any{"type": "user", "uuid": "c1", "parentUuid": "b1", "isCompactSummary": true,
			"message": map[string]any{"role": "user", "content": strings.Repeat("S", 100)}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a4", "parentUuid": "c1", "timestamp": "2026-01-02T11:00:00Z",
			"message": map[string]any{"id": "m3", "role": "assistant", "model": "claude-opus-4-6", "usage": use(1, 0, 300, 3),
				"content": []any{map[string]any{"type": "text", "text": "ok"}}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a5", "parentUuid": "a4", "isApiErrorMessage": true,
			"message": map[string]any{"id": "m4", "role": "assistant", "usage": use(0, 0, 0, 0),
				"content": []any{map[string]any{"type": "text", "text": "API Error"}}}}),
	})
}

func TestCollectHandFixture(t *testing.T) {
	s, err := Collect(context.Background(), handFixture(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Three requests: m1 (two lines; the second line's usage is final),
	// m2, m3. The sidechain and the API error are not requests.
	want := []int64{10 + 100 + 50 + 20, 5 + 150 + 900 + 7, 1 + 0 + 300 + 3}
	if len(s.Turns) != len(want) {
		t.Fatalf("turns = %d, want %d", len(s.Turns), len(want))
	}
	for i, w := range want {
		if got := s.Turns[i].Context(); got != w {
			t.Errorf("turn %d context = %d, want %d", i+1, got, w)
		}
	}
	if s.Turns[0].Line != 2 || s.Turns[1].Line != 5 || s.Turns[2].Line != 9 {
		t.Errorf("turn lines = %d %d %d, want 2 5 9", s.Turns[0].Line, s.Turns[1].Line, s.Turns[2].Line)
	}
	if s.SideTurns != 1 {
		t.Errorf("side turns = %d, want 1", s.SideTurns)
	}
	// Before m2: m1's thinking (4), its Bash input (36 bytes of JSON) and
	// the tool result (3000 characters and its quotes); the largest is the
	// result.
	if got := s.Turns[1].Added; got != 4+36+3002 {
		t.Errorf("turn 2 added = %d, want %d", got, 4+36+3002)
	}
	why := s.Turns[1].Why
	if why.Kind != "tool output" || why.Detail != "Bash: go test" || why.Bytes != 3002 || why.Line != 4 {
		t.Errorf("turn 2 why = %+v", why)
	}
	// Before m3: m2's reply "done" (4) and the compact summary (100).
	if got := s.Turns[2].Added; got != 104 {
		t.Errorf("turn 3 added = %d, want 104", got)
	}
	if s.Turns[2].Why.Kind != "compact summary" {
		t.Errorf("turn 3 why = %+v", s.Turns[2].Why)
	}
	if len(s.Boundaries) != 1 || s.Boundaries[0].Turn != 2 || s.Boundaries[0].Line != 7 {
		t.Errorf("boundaries = %+v, want one after 2 requests at line 7", s.Boundaries)
	}
	if len(s.Tools) != 1 || s.Tools[0] != (Consumer{Name: "Bash", Calls: 1, Output: 3002, Input: 36}) {
		t.Errorf("tools = %+v", s.Tools)
	}
	if len(s.Commands) != 1 || s.Commands[0] != (Consumer{Name: "go test", Calls: 1, Output: 3002, Input: 36}) {
		t.Errorf("commands = %+v", s.Commands)
	}
	if s.Model != "claude-opus-4-6" || s.Window != 200_000 {
		t.Errorf("model %q window %d", s.Model, s.Window)
	}
	// The index-only count analyze's sparkline uses agrees.
	f, _ := os.Open(s.Path)
	defer f.Close()
	ix, err := transcript.Build(f, transcript.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := Contexts(ix, false)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Contexts = %v, want %v", got, want)
	}
}

func TestCommandKey(t *testing.T) {
	for in, want := range map[string]string{
		"go test ./...":                    "go test",
		"cd /a/b && cd c && git diff HEAD": "git diff",
		"FOO=1 BAR=2 make -j4":             "make",
		"/usr/bin/python3 x.py":            "python3",
		"git --no-pager log":               "git",
		"   ":                              "(empty)",
		"ls -la":                           "ls",
	} {
		if got := CommandKey(in); got != want {
			t.Errorf("CommandKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// purgeFixture has a 20 KB Read output early and enough prompts after it
// for the purge to move it into the store.
func purgeFixture(t *testing.T) string {
	lines := []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "message": map[string]any{"role": "user", "content": "read it"}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": map[string]any{"id": "m1", "role": "assistant",
			"usage": use(3, 1000, 100, 10), "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Read", "input": map[string]any{"file_path": "/f"}}}}}),
		rec(t, map[string]any{"type": "user", "uuid": "r1", "parentUuid": "a1", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": strings.Repeat("the quick brown fox ", 1000)}}}}),
	}
	parent := "r1"
	for i := 2; i <= 6; i++ {
		a := "a" + string(rune('0'+i))
		lines = append(lines, rec(t, map[string]any{"type": "assistant", "uuid": a, "parentUuid": parent, "message": map[string]any{"id": "m" + a, "role": "assistant",
			"usage": use(3, 6000+i*100, 100, 10), "content": []any{map[string]any{"type": "text", "text": "answer"}}}}))
		u := "u" + string(rune('0'+i))
		lines = append(lines, rec(t, map[string]any{"type": "user", "uuid": u, "parentUuid": a, "message": map[string]any{"role": "user", "content": "next"}}))
		parent = u
	}
	return write(t, "purge.jsonl", lines)
}

func TestPurgeCurve(t *testing.T) {
	opt := purge.DefaultOptions()
	s, err := Collect(context.Background(), purgeFixture(t), Options{Purge: true, PurgeOptions: opt})
	if err != nil {
		t.Fatal(err)
	}
	if s.PurgeNote != "" || len(s.After) != len(s.Turns) || len(s.Turns) != 6 {
		t.Fatalf("note %q, %d after for %d turns", s.PurgeNote, len(s.After), len(s.Turns))
	}
	if s.After[0] != s.Turns[0].Context() {
		t.Errorf("request 1 comes before the output: after = %d, want its context %d", s.After[0], s.Turns[0].Context())
	}
	// 20,000 bytes of text leave for a stub of a few hundred: at 1 to 10
	// bytes a token, between 1,900 and 20,000 tokens fewer.
	for i := 1; i < 6; i++ {
		saved := s.Turns[i].Context() - s.After[i]
		if saved < 1900 || saved > 20000 {
			t.Errorf("request %d: saved %d tokens, want 1900..20000", i+1, saved)
		}
	}
	if s.PurgeReport == nil || !s.PurgeReport.Changed || s.PurgeReport.BytesAfter >= s.PurgeReport.BytesBefore {
		t.Errorf("purge report %+v", s.PurgeReport)
	}
	// The dry run wrote nothing: the file is as it was, no backup beside it.
	if m, _ := filepath.Glob(s.Path + ".backup.*"); len(m) != 0 {
		t.Errorf("dry run left %v", m)
	}
}

func TestNoUsageSession(t *testing.T) {
	// Claude Code 0.2 wrote no usage.
	p := write(t, "old.jsonl", []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "message": map[string]any{"role": "user", "content": "hi"}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "hello"}}}}),
	})
	s, err := Collect(context.Background(), p, Options{Purge: true, PurgeOptions: purge.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 0 || len(s.Missing) == 0 || !strings.Contains(s.Missing[0], "records its token usage") {
		t.Fatalf("turns %d, missing %q", len(s.Turns), s.Missing)
	}
	out := render(t, s)
	if !strings.Contains(out, "What this page cannot show") || strings.Contains(out, `class="curve"`) {
		t.Errorf("page without usage should say so and draw no curve")
	}
}

func TestTornFile(t *testing.T) {
	p := handFixture(t)
	b, _ := os.ReadFile(p)
	b = append(b, `{"type":"assistant","uuid":"zz","message":{"id":"m9","usage":{"input_tokens":`...)
	os.WriteFile(p, b, 0o600)
	s, err := Collect(context.Background(), p, Options{Purge: true, PurgeOptions: purge.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 3 {
		t.Errorf("turns = %d, want 3 (the torn line is no request)", len(s.Turns))
	}
	if !strings.Contains(strings.Join(s.Missing, "\n"), "line 11 is torn") {
		t.Errorf("missing = %q", s.Missing)
	}
	render(t, s)
}

func TestLongLine(t *testing.T) {
	// One tool output of 50 MB on a single line.
	huge := strings.Repeat("0123456789", 5<<20)
	p := write(t, "long.jsonl", []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "message": map[string]any{"role": "user", "content": "go"}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": map[string]any{"id": "m1", "role": "assistant",
			"usage": use(1, 2, 3, 4), "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": "cat big"}}}}}),
		rec(t, map[string]any{"type": "user", "uuid": "r1", "parentUuid": "a1", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": huge}}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a2", "parentUuid": "r1", "message": map[string]any{"id": "m2", "role": "assistant",
			"usage": use(1, 2, 300000, 4), "content": []any{map[string]any{"type": "text", "text": "big"}}}}),
	})
	s, err := Collect(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 2 || s.Turns[1].Why.Bytes != int64(len(huge)+2) || s.Turns[1].Why.Detail != "Bash: cat" {
		t.Errorf("turns %+v", s.Turns)
	}
	if s.Window != 1_000_000 {
		t.Errorf("a request over 200k means the 1M window; got %d", s.Window)
	}
}

func render(t *testing.T, s *Session) string {
	t.Helper()
	p := NewPage("ccm report", "test", "/c", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	p.AddSession(s)
	var b bytes.Buffer
	if err := p.Render(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPurgeLimit(t *testing.T) {
	p := purgeFixture(t)
	s, err := Collect(context.Background(), p, Options{Purge: true, PurgeOptions: purge.DefaultOptions(), PurgeLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if s.After != nil || !strings.Contains(s.PurgeNote, "over 1.0 KB") || !strings.Contains(s.PurgeNote, "--purge") {
		t.Errorf("a file over the limit gets no curve and a note; after %v, note %q", s.After, s.PurgeNote)
	}
}

func TestPurgeMarkers(t *testing.T) {
	p := handFixture(t)
	// A purge at 10:30 UTC, between request 2 (10:00:12) and 3 (11:00:00);
	// backup names carry local time.
	at := time.Date(2026, 1, 2, 10, 30, 0, 0, time.UTC).In(time.Local)
	if err := os.WriteFile(p+".backup."+at.Format(purge.BackupStamp), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Collect(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Purges) != 1 || s.Purges[0].Turn != 2 {
		t.Fatalf("purges = %+v, want one after 2 requests", s.Purges)
	}
	ch := buildChart(s)
	marks := 0
	for _, m := range ch.Marks {
		if m.Class == "mp" {
			marks++
		}
	}
	if marks != 1 {
		t.Errorf("%d purge marks on the chart, want 1", marks)
	}
}

func TestLoneRequestIsABar(t *testing.T) {
	p := write(t, "one.jsonl", []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "message": map[string]any{"role": "user", "content": "hi"}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": map[string]any{"id": "m1", "role": "assistant",
			"usage": use(1, 50000, 2, 3), "content": []any{map[string]any{"type": "text", "text": "hello"}}}}),
	})
	s, err := Collect(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := buildChart(s)
	// Four corners: two x positions 28 units apart.
	pts := strings.Fields(ch.Layers[0].Points)
	if len(pts) != 4 || !strings.HasPrefix(pts[0], "570.0,") || !strings.HasPrefix(pts[1], "598.0,") {
		t.Errorf("cache read layer of one request = %q", ch.Layers[0].Points)
	}
}

func TestPurgedSessionStubs(t *testing.T) {
	p := purgeFixture(t)
	st, err := ccm.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	opt := purge.DefaultOptions()
	opt.Store = st
	opt.LockDir = t.TempDir()
	if _, err := purge.File(context.Background(), p, opt); err != nil {
		t.Fatal(err)
	}
	s, err := Collect(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The one Read output of 20,000 characters, stubbed in its
	// tool_result: the store holds the JSON string cut out, quotes and all.
	if s.Stubs != 1 || s.StoreBlobs != 1 || s.StoreBytes != 20002 {
		t.Errorf("stubs %d, blobs %d, bytes %d; want 1, 1, 20002", s.Stubs, s.StoreBlobs, s.StoreBytes)
	}
	if out := render(t, s); !strings.Contains(out, "1 records carry stubs for 1 blobs, 20.0 KB in the CCM store") {
		t.Errorf("the page should name the stubs")
	}
	// The purge left a backup: a purge mark (the fixture has no times, so
	// it goes after the last request).
	if len(s.Purges) != 1 || s.Purges[0].Turn != len(s.Turns) {
		t.Errorf("purges %+v", s.Purges)
	}
}
