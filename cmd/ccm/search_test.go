package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"ccm/search"
)

// On a terminal hits are grouped by session, newest session first, the
// match highlighted, and each group ends with how to resume it.
func TestWriteHitsOnATerminal(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hits := []search.Hit{
		{Time: at, Project: "/src/a", Session: "aaaaaaaa-1111", Line: 9, Kind: "reply", Snippet: "the kestrel flew", Mark: [2]int{4, 11}, Resume: "cd /src/a && claude --resume aaaaaaaa-1111"},
		{Time: at.Add(-time.Hour), Project: "/src/b", Session: "bbbbbbbb-2222", Line: 3, Kind: "tool output", Tool: "Bash", Snippet: "kestrel.log", Mark: [2]int{0, 7}, Archived: true, Resume: "ccm unarchive bbbbbbbb-2222 && cd /src/b && claude --resume bbbbbbbb-2222"},
		{Time: at.Add(-2 * time.Hour), Project: "/src/a", Session: "aaaaaaaa-1111", Line: 2, Kind: "prompt", Snippet: "find the kestrel", Mark: [2]int{9, 16}, Resume: "cd /src/a && claude --resume aaaaaaaa-1111"},
	}
	var b bytes.Buffer
	if err := writeHits(globalOptions{Stdout: &b, Terminal: true}, hits); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	a, bb := strings.Index(out, "aaaaaaaa"), strings.Index(out, "bbbbbbbb")
	if a < 0 || bb < a || strings.Count(out, "claude --resume aaaaaaaa-1111") != 1 {
		t.Fatalf("not grouped by session:\n%s", out)
	}
	if !strings.Contains(out, "the \x1b[1;31mkestrel\x1b[0m flew") || !strings.Contains(out, "(archived)") || !strings.Contains(out, "tool output Bash") {
		t.Fatalf("no highlight, archive mark or tool:\n%q", out)
	}
	b.Reset()
	if err := writeHits(globalOptions{Stdout: &b}, hits); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 3 || strings.Contains(b.String(), "\x1b") ||
		!strings.HasSuffix(lines[1], "\tbbbbbbbb-2222\t3\ttool output\tBash\tkestrel.log") {
		t.Fatalf("piped:\n%q", b.String())
	}
}
