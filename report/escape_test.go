package report

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ccm/purge"
)

// Strings a hostile or unlucky transcript may hold: each must reach the
// page as text, never as markup or script.
const (
	scriptBreak = `</script><script>alert("x")</script>`
	imgOnerror  = `<img src=x onerror=alert(1)>`
	wholePage   = `<!DOCTYPE html><html><head><title>owned</title><style>body{display:none}</style><script src="https://evil.example/x.js"></script></head><body onload="alert(2)"><iframe src="https://evil.example/"></iframe></body></html>`
)

func hostileFixture(t *testing.T) string {
	dir := t.TempDir()
	// The file name itself carries markup (Linux allows it).
	p := filepath.Join(dir, `s<img src=x onerror=alert(3)>.jsonl`)
	lines := []string{
		rec(t, map[string]any{"type": "user", "uuid": "u1", "parentUuid": nil, "cwd": "/tmp/" + imgOnerror,
			"message": map[string]any{"role": "user", "content": "see this page: " + wholePage}}),
		rec(t, map[string]any{"type": "custom-title", "customTitle": scriptBreak}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-02T10:00:00Z",
			"message": map[string]any{"id": "m1", "role": "assistant", "model": imgOnerror, "usage": use(1, 2, 3, 4),
				"content": []any{
					map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": scriptBreak + " " + imgOnerror}},
					map[string]any{"type": "tool_use", "id": "t2", "name": scriptBreak + imgOnerror, "input": map[string]any{}},
				}}}),
		rec(t, map[string]any{"type": "user", "uuid": "r1", "parentUuid": "a1", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": wholePage},
			map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": scriptBreak},
		}}}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a2", "parentUuid": "r1", "timestamp": "2026-01-02T10:00:05Z",
			"message": map[string]any{"id": "m2", "role": "assistant", "usage": use(1, 2, 300, 4),
				"content": []any{map[string]any{"type": "text", "text": wholePage}}}}),
		// A dangling parent whose uuid is markup: ccm check quotes it.
		rec(t, map[string]any{"type": "user", "uuid": "u9", "parentUuid": imgOnerror, "message": map[string]any{"role": "user", "content": "x"}}),
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHostileTranscriptRendersAsText(t *testing.T) {
	s, err := Collect(context.Background(), hostileFixture(t), Options{Purge: true, PurgeOptions: purge.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != scriptBreak || !strings.HasPrefix(s.Prompt, "see this page: <!DOCTYPE") {
		t.Fatalf("fixture not read as meant: title %q prompt %q", s.Title, s.Prompt)
	}
	out := render(t, s)
	checkInert(t, out)
	// The hostile strings are on the page, as text.
	for _, want := range []string{
		`&lt;img src=x onerror=alert(1)&gt;`,                             // model, tool name, cwd
		`&lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`, // title
		`&lt;!DOCTYPE html&gt;`,                                          // first prompt
		`s&lt;img src=x onerror=alert(3)&gt;`,                            // session id
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks the escaped text %s", want)
		}
	}
}

// checkInert asserts that a page holds exactly the markup ccm writes: its
// two kinds of script elements, no element a transcript could inject, and
// no address to load anything from.
// attrRE finds a tag (a real '<', not the &lt; of escaped text) with an
// event handler or a source attribute.
var attrRE = regexp.MustCompile(`<[a-z][^<>]*\s(on[a-z]+|src|href|srcset|action|formaction)\s*=`)

func checkInert(t *testing.T, out string) {
	t.Helper()
	lower := strings.ToLower(out)
	// Every <script> is one of ours: the sorting and hover code, and one
	// JSON island per chart.
	scripts := strings.Count(lower, "<script")
	ours := strings.Count(out, "<script>\n(function(){") + strings.Count(out, `<script type="application/json" id="points-`)
	if scripts != ours {
		t.Errorf("%d script elements, %d of them ccm's", scripts, ours)
	}
	if n := strings.Count(lower, "</script"); n != scripts {
		t.Errorf("%d script end tags for %d scripts: something closed one early", n, scripts)
	}
	for _, bad := range []string{"<img", "<iframe", "<title>owned", "<style>body", "<!doctype html><html><head><title>owned"} {
		if strings.Contains(lower, bad) {
			t.Errorf("page holds unescaped %q", bad)
		}
	}
	// No element carries an event handler or an address to load.
	if m := attrRE.FindString(lower); m != "" {
		t.Errorf("page holds an element with a handler or a source: %s", m)
	}
	// The style sheet loads nothing either. (An address in a transcript
	// may well be on the page, as text.)
	style := lower[strings.Index(lower, "<style>"):strings.Index(lower, "</style>")]
	for _, bad := range []string{"http:", "https:", "@import", "url("} {
		if strings.Contains(style, bad) {
			t.Errorf("style sheet holds %q: it must load nothing", bad)
		}
	}
	if strings.Count(lower, "<style") != 1 {
		t.Errorf("one style element expected")
	}
	if strings.Count(lower, "<!doctype") != 1 || strings.Count(lower, "<html") != 1 || strings.Count(lower, "<body") != 1 {
		t.Errorf("one document expected")
	}
}

func TestOverviewEscapes(t *testing.T) {
	cfg := t.TempDir()
	proj := filepath.Join(cfg, "projects", "-tmp-x")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	src := hostileFixture(t)
	b, _ := os.ReadFile(src)
	if err := os.WriteFile(filepath.Join(proj, "0b6e0a52-1f5c-4d8e-9d47-3f1c2b7a9e10.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := Overview(context.Background(), OverviewOptions{ClaudeDir: cfg, StoreRoot: filepath.Join(cfg, "cache"), ArchiveRoot: filepath.Join(cfg, "archive"), Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	if v.Sessions != 1 || len(v.Rows) != 1 || v.Rows[0].Errors == 0 {
		t.Fatalf("overview %+v", v)
	}
	p := NewPage("all", "test", cfg, time.Now())
	p.SetOverview(v)
	var sb strings.Builder
	if err := p.Render(&sb); err != nil {
		t.Fatal(err)
	}
	checkInert(t, sb.String())
	if !strings.Contains(sb.String(), "&lt;/script&gt;") {
		t.Errorf("the title should be on the page, escaped")
	}
}
