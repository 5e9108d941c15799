package purge

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm"
)

// pythonStub is a stub in claude-context-manager's version 2 field set
// (docs/earlier-tools.md, "The stub"),
// written by hand: ccm's own writer is not what wrote these.
func pythonStub(key ccm.Key, source string, bytes, lines int) string {
	return fmt.Sprintf("[CCM_CACHED]\nkey: %s\nsource: %s\nbytes: %d\nlines: %d\npinned: none\n[/CCM_CACHED]", key, source, bytes, lines)
}

// TestRestorePythonStubsByValue: claude-context-manager's store holds the decoded
// text of what it cut (not the JSON value), so ccm restore puts a tool
// output back as the JSON string Claude Code writes for it and an image
// as the image block its text block stood for, and reports them as
// restored by value.
func TestRestorePythonStubsByValue(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	output := "total 3\n\"quoted\" \\ back\tslash é ✓\n" + strings.Repeat("drwx------ 2 u u 4096 file\n", 200)
	k1, err := e.store.Put(ctx, []byte(output), ccm.Source{ToolName: "Bash", Command: "ls -la"}, ccm.PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	png := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG fake image bytes ", 200)))
	k2, err := e.store.Put(ctx, []byte(png), ccm.Source{}, ccm.PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	in := jsonl(
		userPrompt("u1", "", "list it"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls -la"}`),
		toolResult("r1", "a1", "t1", js(pythonStub(k1, "Bash ls -la", len(output), strings.Count(output, "\n")))),
		rec("parentUuid", "r1", "isSidechain", false, "type", "user",
			"message", raw(`{"role":"user","content":[{"type":"text","text":`+js(pythonStub(k2, "Image (PNG)", len(png), 0))+`},{"type":"text","text":"what is this?"}]}`), "uuid", "u2"),
		assistantText("a2", "u2", "m2", "a picture"),
	)
	p := e.write("py.jsonl", in)
	rr, err := restoreFile(ctx, p, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rr.Restored != 2 || rr.ByValue != 2 || len(rr.Missing) != 0 {
		t.Fatalf("restored %d (%d by value), missing %v; want 2 by value", rr.Restored, rr.ByValue, rr.Missing)
	}
	out := readFile(t, p)
	if got := gjson.GetBytes(lineOf(out, "r1"), "message.content.0.content").Str; got != output {
		t.Errorf("tool output restored as %.80q", got)
	}
	img := gjson.GetBytes(lineOf(out, "u2"), "message.content.0")
	if img.Get("type").Str != "image" || img.Get("source.media_type").Str != "image/png" || img.Get("source.data").Str != png {
		t.Errorf("image block restored as %.200s", img.Raw)
	}
	if got := gjson.GetBytes(lineOf(out, "u2"), "message.content.1.text").Str; got != "what is this?" {
		t.Errorf("the text beside the image: %q", got)
	}
	mustCheck(t, out, false)
}
