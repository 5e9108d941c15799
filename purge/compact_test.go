package purge

import (
	"bytes"
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
)

// TestArchiveCompacted: --archive-compacted moves everything before the
// last compact boundary into the store behind one record, keeps the last
// copy of the metadata records Claude Code re-reads, resumes the same, and
// restore puts the region back byte for byte.
func TestArchiveCompacted(t *testing.T) {
	gen2, _ := gen(t, synth.Options{Seed: 141, Turns: 12, Compactions: 2, Thinking: true, Progress: true, Version: "2.1.39"})
	hand := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		rec("type", "custom-title", "customTitle", "my session é", "sessionId", "s"),
		rec("type", "custom-title", "customTitle", "renamed", "sessionId", "s"),
		rec("parentUuid", nil, "logicalParentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "compact_boundary",
			"content", "Conversation compacted", "compactMetadata", raw(`{"trigger":"auto","preTokens":1000}`), "uuid", "cb"),
		rec("parentUuid", "cb", "isSidechain", false, "type", "user", "isCompactSummary", true,
			"message", raw(`{"role":"user","content":"Summary."}`), "uuid", "cs"),
		userPrompt("u2", "cs", "two"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	for _, in := range [][]byte{gen2, hand} {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		o := e.opts()
		o.ArchiveCompacted = true
		o.KeepThinking, o.KeepProgress = true, true
		o.Threshold, o.OldThreshold = 1<<30, 0 // nothing else changes
		rep, out := e.purge(p, o)
		if rep.ArchivedLines == 0 || rep.ArchiveSkipped != "" {
			t.Fatalf("nothing archived (%q)", rep.ArchiveSkipped)
		}
		mustCheck(t, out, false)
		keepsPrompts(t, in, out)
		// Everything from the last boundary on is unchanged.
		last := bytes.LastIndex(in, []byte(`"subtype":"compact_boundary"`))
		start := bytes.LastIndexByte(in[:last], '\n') + 1
		if !bytes.HasSuffix(out, in[start:]) {
			t.Error("the region after the last boundary changed")
		}
		if bytes.Contains(in, []byte(`"renamed"`)) {
			if !bytes.Contains(out, []byte(rec("type", "custom-title", "customTitle", "renamed", "sessionId", "s"))) {
				t.Error("the last custom-title was not kept")
			}
			if bytes.Contains(out, []byte("my session é")) {
				t.Error("an older custom-title was kept")
			}
		}
		again, out2 := e.purge(p, o)
		if again.Changed || !bytes.Equal(out, out2) {
			t.Error("a second --archive-compacted purge changed the file")
		}
		restoresTo(t, p, o, in)
	}
}

// restoresTo runs one restore of path and checks that it gives want back,
// byte for byte, with no stub missing.
func restoresTo(t *testing.T, path string, o Options, want []byte) {
	t.Helper()
	rr, err := restoreFile(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Missing) != 0 {
		t.Errorf("missing %v", rr.Missing)
	}
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Errorf("one restore gave %d bytes, original %d", len(got), len(want))
		reportFirstDiff(t, want, got)
	}
}

// TestRestoreStubsInsideArchive: a purge stubs large outputs, a later one
// archives the region before the boundary, stubs and all. One restore
// brings back the original: the archived region is restored as it streams
// out of the store, its stubs expanded too.
func TestRestoreStubsInsideArchive(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 142, Turns: 12, Compactions: 2, Thinking: true, Progress: true, Version: "2.1.39"})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.KeepThinking, o.KeepProgress, o.RecentTurns = true, true, 0
	o.Threshold = 300
	first, stubbed := e.purge(p, o)
	if first.Stubs == 0 {
		t.Fatal("the first purge stubbed nothing")
	}
	o.ArchiveCompacted = true
	second, _ := e.purge(p, o)
	if second.ArchivedLines == 0 {
		t.Fatalf("nothing archived (%q)", second.ArchiveSkipped)
	}
	last := bytes.LastIndex(stubbed, []byte(`"subtype":"compact_boundary"`))
	if !bytes.Contains(stubbed[:last], []byte("[CCM_CACHED]")) {
		t.Fatal("fixture: no stub before the last boundary, so none in the archive")
	}
	restoresTo(t, p, o, in)
}

// TestInjectCompactionSummary: the injected summary is built from the
// transcript (the last user requests are in it) and resume sends only
// the kept turns after it.
func TestInjectCompactionSummary(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "please fix the parser in internal/parse.go"),
		assistantToolUse("a1", "u1", "m1", "t1", "Edit", `{"file_path":"/src/internal/parse.go","old_string":"a","new_string":"b"}`),
		toolResult("r1", "a1", "t1", `"The file has been updated"`),
		assistantToolUse("a2", "r1", "m2", "t2", "Bash", `{"command":"go test ./..."}`),
		toolResult("r2", "a2", "t2", `"ok"`),
		assistantText("a3", "r2", "m3", "fixed"),
		userPrompt("u2", "a3", "now update the docs"),
		assistantText("a4", "u2", "m4", "done"),
		userPrompt("u3", "a4", "thanks"),
		assistantText("a5", "u3", "m5", "you're welcome"),
	)
	e := newEnv(t)
	o := e.opts()
	o.InjectCompaction = true
	o.KeepTurns = 1
	rep, out := e.purgeBytes(in, o)
	if !rep.Injected {
		t.Fatalf("nothing injected (%q)", rep.InjectSkipped)
	}
	var summary string
	for _, l := range objectLines(out) {
		if gjson.GetBytes(l, "isCompactSummary").Bool() {
			summary = gjson.GetBytes(l, "message.content").Str
		}
	}
	for _, want := range []string{"parse.go", "go test ./...", "now update the docs"} {
		if !bytes.Contains([]byte(summary), []byte(want)) {
			t.Errorf("the summary does not mention %q:\n%s", want, summary)
		}
	}
	c := chainPrompts(t, out)
	if len(c) != 1 || !c["u3"] {
		t.Errorf("prompts on the chain after injection: %v, want u3 only", c)
	}
	mustCheck(t, out, false)
}
