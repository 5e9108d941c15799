package purge

// Regression tests for the defects of the Python purge (prior-art.md D1).
// D1 #1 (appends lost during the rewrite) and #2 (no atomic write) are in
// safety_test.go, where they need a second process.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/fsutil"
	"ccm/internal/synth"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// D1 #3: no locking between hooks, purge and prune. A purge holds the
// store's shared lock while it writes blobs, so a prune (exclusive lock)
// waits; and two purges of one transcript never run at once.
func TestLocking(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 103, Turns: 10, Images: true})
	ctx := context.Background()

	t.Run("store locked by a prune", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		// Create the store, then hold it exclusively as prune does.
		if _, err := e.store.Put(ctx, []byte("x"), ccm.Source{}, ccm.PinNone, ""); err != nil {
			t.Fatal(err)
		}
		unlock, err := e.store.LockExclusive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		e.store.LockWait = 200 * time.Millisecond
		_, err = File(ctx, p, e.opts())
		if !errors.Is(err, ccm.ErrLocked) {
			t.Errorf("purge with the store locked: %v, want ccm.ErrLocked", err)
		}
		if !bytes.Equal(readFile(t, p), in) {
			t.Error("the transcript changed")
		}
		assertNoTemp(t, e.dir)
	})

	t.Run("transcript locked by another purge", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		o := e.opts()
		o.LockWait = 100 * time.Millisecond
		// Another ccm holds the transcript's sidecar lock.
		other := o
		other.LockWait = time.Second
		release := holdTranscriptLock(t, p, o.LockDir)
		_, err := File(ctx, p, o)
		release()
		if !errors.Is(err, ErrLocked) {
			t.Errorf("second purge: %v, want ErrLocked", err)
		}
		if !bytes.Equal(readFile(t, p), in) {
			t.Error("the transcript changed")
		}
		// Released, it goes through; the lock is never on the transcript
		// itself (its inode is replaced).
		if _, err := File(ctx, p, other); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(o.LockDir); len(entries) == 0 {
			t.Error("no sidecar lock file in the lock dir")
		}
	})

	t.Run("a prune waits for a running purge", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		// The purge's stubbing holds the store; an exclusive lock taken
		// afterwards must see every blob the new transcript names.
		if _, err := File(ctx, p, e.opts()); err != nil {
			t.Fatal(err)
		}
		unlock, err := e.store.LockExclusive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		for _, l := range splitLines(readFile(t, p)) {
			for _, st := range stubsIn(l) {
				if err := e.store.Verify(st.Key); err != nil {
					t.Errorf("stub %s: %v", st.Key, err)
				}
			}
		}
	})
}

// holdTranscriptLock takes the sidecar lock another ccm would hold.
func holdTranscriptLock(t *testing.T, path, lockDir string) func() {
	t.Helper()
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Same name as lockPath: any ccm process computes it the same way.
	l, err := fsutil.LockFile(context.Background(), rewrite.LockPath(lockDir, path), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	return func() { l.Unlock() }
}

// assertNoTemp fails when a temp file is left in dir.
func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "ccm-tmp") || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

// snapshot lists every file and directory under root with its size and
// mtime.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		out[p] = fi.Mode().String() + " " + fi.ModTime().String() + " " + string(rune(fi.Size()))
		return nil
	})
	return out
}

// D1 #4: --dry-run wrote the cache. A dry run has no side effect at all:
// no store, no backup, no temp file, no lock file, the transcript's bytes
// and mtime unchanged; it still reports what would change.
func TestDryRunNoSideEffects(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 104, Turns: 16, Thinking: true, Progress: true, Images: true, Defects: synth.AllDefects})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(filepath.Dir(e.dir))
	before := snapshot(t, base)
	o := e.opts()
	o.DryRun = true
	o.Tokens = true
	rep, err := File(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, base); len(after) != len(before) {
		for k := range after {
			if _, ok := before[k]; !ok {
				t.Errorf("dry run created %s", k)
			}
		}
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Errorf("dry run changed %s", k)
			}
		}
	}
	if e.store.Exists() {
		t.Error("dry run created the store")
	}
	fi, _ := os.Stat(p)
	if !fi.ModTime().Equal(old) {
		t.Errorf("mtime changed: %v -> %v", old, fi.ModTime())
	}
	if !bytes.Equal(readFile(t, p), in) {
		t.Error("dry run changed the transcript")
	}
	// What it would do.
	if !rep.Changed || !rep.DryRun || rep.Backup != "" {
		t.Errorf("report: changed=%v dry=%v backup=%q", rep.Changed, rep.DryRun, rep.Backup)
	}
	if rep.Stubs == 0 || rep.ThinkingRemoved == 0 || rep.DroppedProgress == 0 || rep.BytesAfter >= rep.BytesBefore {
		t.Errorf("dry run reports no savings: %+v", rep)
	}
	if rep.TokensBefore == nil || rep.TokensAfter == nil || rep.TokensAfter.Tokens >= rep.TokensBefore.Tokens {
		t.Errorf("dry run token estimate: %+v -> %+v", rep.TokensBefore, rep.TokensAfter)
	}
	// And it says exactly what the real purge then does.
	o.DryRun = false
	o.Tokens = false
	real, out := e.purge(p, o)
	if real.BytesAfter != rep.BytesAfter || real.Stats != rep.Stats {
		t.Errorf("dry run said %d bytes %+v, purge did %d bytes %+v", rep.BytesAfter, rep.Stats, real.BytesAfter, real.Stats)
	}
	if int64(len(out)) != real.BytesAfter {
		t.Errorf("report %d bytes, file %d", real.BytesAfter, len(out))
	}
}

// D1 #5: backup names had 1-second resolution (two runs in one second
// overwrote the first backup), and the backup was made after processing.
func TestBackupNamesUnique(t *testing.T) {
	e := newEnv(t)
	v1 := thinkingFixture()
	v2 := stubFixture()
	p := e.write("s.jsonl", v1)
	o := e.opts()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	o.Now = func() time.Time { return now }
	var backups []string
	for i, in := range [][]byte{v1, v2, v1} {
		if i > 0 {
			// Claude Code rewrote the session meanwhile (same second).
			if err := os.WriteFile(p, in, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rep, _ := e.purge(p, o)
		if rep.Backup == "" {
			t.Fatalf("run %d: no backup", i)
		}
		if !bytes.Equal(readBackup(t, rep.Backup), in) {
			t.Errorf("run %d: backup %s is not the file as it was", i, rep.Backup)
		}
		backups = append(backups, rep.Backup)
	}
	seen := map[string]bool{}
	for _, b := range backups {
		if seen[b] {
			t.Errorf("backup name %s used twice", b)
		}
		seen[b] = true
		if !strings.HasPrefix(filepath.Base(b), "s.jsonl.backup.20260301_120000.000") {
			t.Errorf("backup name %s", b)
		}
	}
	// Every backup still holds its version.
	for i, in := range [][]byte{v1, v2, v1} {
		if !bytes.Equal(readBackup(t, backups[i]), in) {
			t.Errorf("backup %d was overwritten", i)
		}
	}
	// Backups are not transcripts: discovery must not pick them up.
	for _, b := range backups {
		if transcript.IsSessionFileName(filepath.Base(b)) {
			t.Errorf("%s looks like a session file", b)
		}
	}
}

// D1 #6: removing an orphan tool_result left "content": [] (rejected by
// the API).
func TestNoEmptyContent(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 106, Turns: 20, Defects: []synth.Defect{synth.OrphanToolResult, synth.EmptyContent, synth.EmptyText}})
	hand := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		toolResult("r1", "a1", "t-none", `"stray"`),
		assistantText("a2", "r1", "m2", "ok"),
	)
	for _, data := range [][]byte{in, hand} {
		e := newEnv(t)
		rep, out := e.purgeBytes(data, e.opts())
		for _, l := range objectLines(out) {
			c := gjson.GetBytes(l, "message.content")
			if c.IsArray() && len(c.Array()) == 0 {
				t.Errorf("content: [] in %.160s", l)
			}
		}
		mustCheck(t, out, false)
		e.invariants(data, rep.Path, e.opts(), false)
	}
}

// D1 #7: an orphan tool_use alone in its record was kept, so the API error
// stayed. It gets a synthesised is_error result.
func TestOrphanToolUseAlone(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 107, Turns: 20, Defects: []synth.Defect{synth.OrphanToolUse}})
	if n := len(checkErrors(t, in, false)); n == 0 {
		t.Fatal("fixture passes check")
	}
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	d := m.DefectsOf(synth.OrphanToolUse)[0]
	found := false
	for _, l := range splitLines(out) {
		if isSynthResult(l) && gjson.GetBytes(l, "message.content.0.tool_use_id").Str == d.ToolUseID {
			found = true
		}
	}
	if !found {
		t.Errorf("no synthesised result for %s", d.ToolUseID)
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// D1 #8: pairing was global: a result whose tool_use exists anywhere
// counted as paired, across messages and compaction boundaries. The API
// wants the result in the very next message.
func TestPairingByAdjacency(t *testing.T) {
	t.Run("result two messages late", func(t *testing.T) {
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			userPrompt("u2", "a1", "hm?"),
			assistantText("a2", "u2", "m2", "waiting"),
			toolResult("r1", "a2", "t1", `"late"`),
			assistantText("a3", "r1", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		if rep.SynthesizedResults != 1 || rep.RemovedOrphanResult != 1 {
			t.Errorf("synthesised %d, removed %d; want 1 and 1", rep.SynthesizedResults, rep.RemovedOrphanResult)
		}
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
	t.Run("across a compaction", func(t *testing.T) {
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			rec("parentUuid", nil, "logicalParentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "compact_boundary",
				"content", "Conversation compacted", "uuid", "cb"),
			rec("parentUuid", "cb", "isSidechain", false, "type", "user", "isCompactSummary", true,
				"message", raw(`{"role":"user","content":"Summary of the earlier conversation."}`), "uuid", "cs"),
			assistantText("a2", "cs", "m2", "continuing"),
			toolResult("r1", "a2", "t1", `"from before the boundary"`),
			assistantText("a3", "r1", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		if rep.RemovedOrphanResult != 1 {
			t.Errorf("removed %d orphan results, want 1", rep.RemovedOrphanResult)
		}
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
	t.Run("duplicate tool_use id", func(t *testing.T) {
		// The same tool id in two messages (a retried request written
		// twice): the API rejects duplicate ids.
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			toolResult("r1", "a1", "t1", `"first"`),
			assistantToolUse("a2", "r1", "m2", "t1", "Bash", `{"command":"ls"}`),
			toolResult("r2", "a2", "t1", `"second"`),
			assistantText("a3", "r2", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
}

// D1 #9: the parent relink took the previous line with any uuid (progress,
// system, sidechain, other branch). Relinks go to the logical parent, and
// saved_hook_context records sharing one uuid are not a cycle.
func TestRelinkLogicalParent(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		// Another branch (a rewind) after the chain's last record.
		userPrompt("u1b", "a1", "abandoned"),
		assistantText("a1b", "u1b", "m1b", "abandoned reply"),
		progress("p1", "a1b"),
		sidechainRec("x1", "", "user", "sub task"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "attachment", "attachment", raw(`{"type":"hook_additional_context","content":"x"}`), "uuid", "h1"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "saved_hook_context", "content", "ctx", "uuid", "shc"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "saved_hook_context", "content", "ctx", "uuid", "shc"),
		userPrompt("u2", "gone", "two"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	e := newEnv(t)
	o := e.opts()
	o.KeepProgress = true
	rep, out := e.purgeBytes(in, o)
	p := parentOf(t, out, "u2")
	l := lineOf(out, p)
	if l == nil {
		t.Fatalf("u2 relinked to %q, not a record", p)
	}
	r := gjson.ParseBytes(l)
	switch {
	case r.Get("type").Str == "progress", r.Get("type").Str == "attachment", r.Get("isSidechain").Bool():
		t.Errorf("u2 relinked to a %s record (sidechain %v)", r.Get("type").Str, r.Get("isSidechain").Bool())
	}
	c := index(t, out).ActiveChain()
	if c.Cycle || c.BrokenAt >= 0 {
		t.Errorf("chain: cycle %v, broken at %d", c.Cycle, c.BrokenAt)
	}
	// u1 (the first prompt) is reachable again.
	if !chainPrompts(t, out)["u1"] {
		t.Error("u1 is not on the repaired chain")
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// D1 #10: --remove-thinking left empty assistant records, stripped the
// latest turn's thinking and removed redacted_thinking uncounted.
func TestOlderThinkingRemoved(t *testing.T) {
	in := thinkingFixture()
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	for _, l := range objectLines(out) {
		if c := gjson.GetBytes(l, "message.content"); c.IsArray() && len(c.Array()) == 0 {
			t.Errorf("empty record left: %s", l)
		}
	}
	if !bytes.Equal(lineOf(out, "a6"), lineOf(in, "a6")) {
		t.Error("the latest thinking changed")
	}
	// m1, m2 and the redacted block of m3.
	if rep.ThinkingRemoved != 3 {
		t.Errorf("counted %d thinking blocks removed, want 3 (redacted counts)", rep.ThinkingRemoved)
	}
}

// D1 #11: a synthetic compaction was injected by default (a fake summary,
// no boundary, a "now" timestamp out of order). By default nothing is
// injected; when asked for, the pair is a real one.
func TestNoInjectionByDefault(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 111, Turns: 12, Thinking: true})
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if n := bytes.Count(out, []byte(`"isCompactSummary":true`)); n != 0 {
		t.Errorf("%d compaction summaries injected by default", n)
	}
	if bytes.Contains(out, []byte(`"compact_boundary"`)) {
		t.Error("compact boundary injected by default")
	}
	e.invariants(in, rep.Path, e.opts(), false)

	e2 := newEnv(t)
	o := e2.opts()
	o.InjectCompaction = true
	o.KeepTurns = 3
	rep, out = e2.purgeBytes(in, o)
	lines := objectLines(out)
	b := -1
	for i, l := range lines {
		if gjson.GetBytes(l, "subtype").Str == "compact_boundary" {
			b = i
		}
	}
	if b < 0 || b+1 >= len(lines) {
		t.Fatal("no compact boundary injected")
	}
	bd, sum := gjson.ParseBytes(lines[b]), gjson.ParseBytes(lines[b+1])
	if bd.Get("parentUuid").Type != gjson.Null || bd.Get("logicalParentUuid").Str == "" || !bd.Get("compactMetadata").IsObject() {
		t.Errorf("boundary: %s", lines[b])
	}
	if !sum.Get("isCompactSummary").Bool() || sum.Get("parentUuid").Str != bd.Get("uuid").Str {
		t.Errorf("summary: %.300s", lines[b+1])
	}
	// Timestamps stay in order around the pair.
	prev := ""
	for i := b - 1; i >= 0 && prev == ""; i-- {
		prev = gjson.GetBytes(lines[i], "timestamp").Str
	}
	next := ""
	for i := b + 2; i < len(lines) && next == ""; i++ {
		next = gjson.GetBytes(lines[i], "timestamp").Str
	}
	for _, ts := range []string{bd.Get("timestamp").Str, sum.Get("timestamp").Str} {
		if ts < prev || next != "" && ts > next {
			t.Errorf("injected timestamp %s out of order (%s .. %s)", ts, prev, next)
		}
	}
	// The kept turns are what resume sends.
	if got := len(chainPrompts(t, out)); got != 3 {
		t.Errorf("%d prompts after the injected compaction, want 3", got)
	}
	mustCheck(t, out, false)
	// Purging again does not inject twice.
	rep2, again := e2.purge(rep.Path, o)
	if rep2.Changed || !bytes.Equal(again, out) {
		t.Error("a second purge with --inject-compaction changed the file")
	}
}

// D1 #12: lossy paths: recent results truncated without caching, tools
// without metadata truncated, --no-ccm truncating everything. Nothing is
// ever cut without its bytes stored: every output value is the input's,
// or a stub whose blob holds exactly what it replaced.
func TestNeverTruncate(t *testing.T) {
	tools := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "TodoWrite", `{"todos":[]}`),
		toolResult("r1", "a1", "t1", js(bigText("todo", 9000))),
		assistantToolUse("a2", "r1", "m2", "t2", "mcp__db__query", `{"sql":"select 1"}`),
		toolResult("r2", "a2", "t2", `[{"type":"text","text":`+js(bigText("mcp", 9000))+`}]`),
		assistantToolUse("a3", "r2", "m3", "t3", "BashOutput", `{"bash_id":"b1"}`),
		toolResult("r3", "a3", "t3", js(bigText("bg", 9000))),
		assistantText("a4", "r3", "m4", "ok"),
		userPrompt("u2", "a4", "two"),
		assistantToolUse("a5", "u2", "m5", "t5", "Bash", `{"command":"cat"}`),
		toolResult("r5", "a5", "t5", js(bigText("recent", 12000))),
		assistantText("a6", "r5", "m6", "ok"),
		userPrompt("u3", "a6", "three"),
		assistantText("a7", "u3", "m7", "ok"),
	)
	for _, noStore := range []bool{false, true} {
		e := newEnv(t)
		o := e.opts()
		o.NoStore = noStore
		rep, out := e.purgeBytes(tools, o)
		if noStore {
			if !bytes.Equal(out, tools) {
				t.Error("--no-ccm changed the file")
			}
			continue
		}
		if rep.Stubs != 3 {
			t.Errorf("%d stubs, want the 3 old outputs (tools without metadata included)", rep.Stubs)
		}
		if !bytes.Equal(lineOf(out, "r5"), lineOf(tools, "r5")) {
			t.Error("the recent result changed")
		}
		for _, u := range []string{"r1", "r2", "r3"} {
			for _, st := range stubsIn(lineOf(out, u)) {
				got, err := e.store.Get(context.Background(), st.Key)
				if err != nil || int64(len(got)) != st.Bytes {
					t.Errorf("%s: blob %s: %v (%d bytes, stub says %d)", u, st.Key, err, len(got), st.Bytes)
				}
			}
		}
		if bytes.Contains(out, []byte("TRUNCATED")) {
			t.Error("truncation marker in the output")
		}
	}
	// The benchmark mix with the smallest threshold: every stub restores.
	in, _ := gen(t, synth.Benchmark(112, 2<<20))
	e := newEnv(t)
	o := e.opts()
	o.KeepThinking, o.KeepProgress, o.KeepBookkeeping = true, true, true
	o.Threshold = 100
	p := e.write("b.jsonl", in)
	e.purge(p, o)
	rr, err := restoreFile(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Missing) != 0 || rr.Restored == 0 {
		t.Errorf("restore: %d restored, missing %v", rr.Restored, rr.Missing)
	}
	// Only the repairs differ from the input: repair the input alone and
	// compare.
	e2 := newEnv(t)
	ro := e2.opts()
	ro.RepairOnly = true
	_, repaired := e2.purgeBytes(in, ro)
	if !bytes.Equal(readFile(t, p), repaired) {
		t.Error("purge + restore differs from a repair of the input: content was lost")
	}
}

// unstubbedBytes is the size of v less the stubs in it.
func unstubbedBytes(v gjson.Result) int {
	if isStubValue(v) {
		return 0
	}
	n := len(v.Raw)
	if v.IsObject() {
		v.ForEach(func(_, m gjson.Result) bool {
			n -= len(m.Raw) - unstubbedBytes(m)
			return true
		})
	}
	return n
}

// D1 #13: missed savings: toolUseResult copies, thinking, list-form
// results, images in tool results and tool_use inputs stayed. After a
// default purge, no content over the threshold is left before the recent
// window.
func TestNoMissedSavings(t *testing.T) {
	in, _ := gen(t, synth.Benchmark(113, 4<<20))
	e := newEnv(t)
	o := e.opts()
	rep, out := e.purgeBytes(in, o)
	lines := objectLines(out)
	// The window starts at the 2nd-last prompt.
	var prompts []int
	for i, l := range lines {
		if isUserPrompt(l) {
			prompts = append(prompts, i)
		}
	}
	window := prompts[len(prompts)-2]
	large := func(v gjson.Result) bool { return len(v.Raw) > o.Threshold && !isStubValue(v) }
	for i, l := range lines[:window] {
		r := gjson.ParseBytes(l)
		if r.Get("isCompactSummary").Bool() {
			continue
		}
		if n := unstubbedBytes(r.Get("toolUseResult")); n > o.Threshold {
			t.Errorf("record %d: toolUseResult holds %d bytes besides its stubs", i, n)
		}
		r.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_result":
				if large(b.Get("content")) {
					t.Errorf("record %d: tool_result of %d bytes left", i, len(b.Get("content").Raw))
				}
				b.Get("content").ForEach(func(_, ib gjson.Result) bool {
					if ib.Get("type").Str == "image" && len(ib.Raw) > o.ImageMin {
						t.Errorf("record %d: image in a tool_result left", i)
					}
					return true
				})
			case "image":
				if len(b.Raw) > o.ImageMin {
					t.Errorf("record %d: image left", i)
				}
			case "thinking", "redacted_thinking":
				// Only the latest message may keep thinking; it is after
				// the window start in a benchmark file.
				t.Errorf("record %d: old thinking left", i)
			case "tool_use":
				for _, f := range inputFields[b.Get("name").Str] {
					if large(b.Get("input." + f)) {
						t.Errorf("record %d: %s input %s left", i, b.Get("name").Str, f)
					}
				}
			}
			return true
		})
	}
	if rep.BytesAfter > rep.BytesBefore/3 {
		t.Errorf("%d -> %d bytes: less than two thirds saved", rep.BytesBefore, rep.BytesAfter)
	}
	e.invariants(in, rep.Path, o, false)
}

// D1 #14: --current replaced only "/" in the working directory, so paths
// with "_", "." or spaces never matched, and CLAUDE_CONFIG_DIR was
// ignored. The CLI side is in cmd/ccm/testdata/script/purge_current.txtar.
func TestCurrentSessionFolderNaming(t *testing.T) {
	cfg := t.TempDir()
	cwd := "/home/u/x/my_proj.v2/with space+plus"
	dir := filepath.Join(transcript.ProjectsDir(cfg), "-home-u-x-my-proj-v2-with-space-plus")
	if transcript.ProjectDirName(cwd) != filepath.Base(dir) {
		t.Fatalf("ProjectDirName(%q) = %q", cwd, transcript.ProjectDirName(cwd))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := thinkingFixture()
	p := filepath.Join(dir, "0b5c8d2e-1111-4222-8333-444455556666.jsonl")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := transcript.CurrentSession(cfg, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != p {
		t.Errorf("current session %s, want %s", s.Path, p)
	}
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	if _, err := File(context.Background(), s.Path, o); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, readFile(t, p), false)
}

// D1 #15: a JSON line that is not an object crashed the tool before any
// write. Such lines, and every other bad line, pass through verbatim.
func TestNonObjectLines(t *testing.T) {
	in := jsonl(
		`[{"type":"user"}]`,
		userPrompt("u1", "", "one"),
		`123`,
		`"a string"`,
		``,
		`null`,
		assistantThinking("a1", "u1", "m1", "old", sig),
		assistantText("a2", "a1", "m1", "ok"),
		`{"parentUuid":"a2","type":"user","mess`,
		string(bytes.Repeat([]byte{0}, 64))+`{"type":"queue-operation","operation":"enqueue"}`,
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m2", "ok"),
	)
	in = append(in, []byte(`{"parentUuid":"a3","type":"assis`)...) // torn last line
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if !rep.Changed {
		t.Error("nothing changed")
	}
	for _, bad := range []string{`[{"type":"user"}]`, "\n123\n", `"a string"`, "\n\n", "\nnull\n", `{"parentUuid":"a2","type":"user","mess`, `{"parentUuid":"a3","type":"assis`} {
		if !bytes.Contains(out, []byte(bad)) {
			t.Errorf("bad line %q was not kept", bad)
		}
	}
	if !bytes.HasSuffix(out, []byte(`{"parentUuid":"a3","type":"assis`)) {
		t.Error("the torn last line is not the last line any more")
	}
	if !bytes.Contains(out, bytes.Repeat([]byte{0}, 64)) {
		t.Error("the NUL run was not kept")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// D1 #16: thresholds counted characters, and modified lines were
// re-serialised with \uXXXX escapes. Sizes are bytes; edited lines keep
// their raw non-ASCII text and escapes as written.
func TestBytesAndRawText(t *testing.T) {
	escaped := `"escaped: \u00e9 \ud83d\ude00 \"q\" \/ \t"`
	in := jsonl(
		userPrompt("u1", "", "first é ✓ 🎉"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"`+sig+`"},{"type":"text","text":`+escaped+`},{"type":"text","text":"raw: café naïve 日本語 😀"}]}`), "uuid", "a1"),
		assistantToolUse("a2", "a1", "m1", "t1", "Read", `{"file_path":"/données/é.txt"}`),
		toolResult("r1", "a2", "t1", js(strings.Repeat("é", 3000)), "toolUseResult", raw(`{"file":{"filePath":"/données/é.txt","content":"short é"}}`)),
		userPrompt("u2", "r1", "two ✓"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "three"),
		assistantText("a4", "u3", "m4", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	a1 := lineOf(out, "a1")
	if !bytes.Contains(a1, []byte(escaped)) || !bytes.Contains(a1, []byte("raw: café naïve 日本語 😀")) {
		t.Errorf("a1's text changed: %s", a1)
	}
	// 3000 characters, 6002 bytes of JSON: over the 5000-byte threshold.
	st, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "message.content.0.content").Str)
	if !ok {
		t.Fatal("a 6000-byte result of 3000 characters was not stubbed")
	}
	if st.Bytes != 6002 {
		t.Errorf("stub says %d bytes, the value has 6002", st.Bytes)
	}
	if st.Source != "Read /données/é.txt" || !bytes.Contains(lineOf(out, "r1"), []byte("source: Read /données/é.txt")) {
		t.Errorf("stub source %q not kept raw", st.Source)
	}
	if got := checkEdits(t, in, out); got != 2 {
		t.Errorf("%d lines edited, want a1 and r1", got)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// D1 #17: the savings report was absurd ("15,839 % of message space").
// The report's sizes are the files' sizes and the token estimate shrinks.
func TestHonestReport(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 117, Turns: 14, Thinking: true, Progress: true, Images: true})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.Tokens = true
	rep, out := e.purge(p, o)
	if rep.BytesBefore != int64(len(in)) || rep.BytesAfter != int64(len(out)) {
		t.Errorf("report %d -> %d bytes, files %d -> %d", rep.BytesBefore, rep.BytesAfter, len(in), len(out))
	}
	if rep.TokensBefore == nil || rep.TokensAfter == nil {
		t.Fatal("no token estimate")
	}
	if !(rep.TokensAfter.Tokens > 0 && rep.TokensAfter.Tokens < rep.TokensBefore.Tokens) {
		t.Errorf("tokens %d -> %d", rep.TokensBefore.Tokens, rep.TokensAfter.Tokens)
	}
	// The estimate after is the estimate of the file as written.
	ix := index(t, out)
	f, _ := os.Open(p)
	defer f.Close()
	c := ix.ActiveChain()
	est, err := ix.EstimateContext(f, c, ix.Messages(c))
	if err != nil {
		t.Fatal(err)
	}
	if d := est.Tokens - rep.TokensAfter.Tokens; d > est.Tokens/50 || -d > est.Tokens/50 {
		t.Errorf("report says %d tokens after, the purged file has %d", rep.TokensAfter.Tokens, est.Tokens)
	}
	// Nothing to do: the report says so.
	rep2, _ := e.purge(p, o)
	if rep2.Changed || rep2.BytesAfter != rep2.BytesBefore || rep2.Backup != "" {
		t.Errorf("second run report: %+v", rep2)
	}
}

// D1 #18: the proxy flag (~/.claude/proxy-state/no-thinking/<stem>) was
// touched on every run, even in tests. ccm writes nothing outside the
// transcript's directory (new file, backup), the store and the lock dir.
func TestNoStrayFiles(t *testing.T) {
	home := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	t.Setenv("TMPDIR", tmp)
	in, _ := gen(t, synth.Options{Seed: 118, Turns: 12, Thinking: true, Images: true, Defects: synth.AllDefects})
	for _, o := range []func(*Options){
		func(*Options) {},
		func(o *Options) { o.RepairOnly = true },
		func(o *Options) { o.Backup = BackupZstd },
	} {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		opt := e.opts()
		o(&opt)
		opt.Tokens = true
		rep, _ := e.purge(p, opt)
		base := filepath.Dir(filepath.Dir(e.dir))
		filepath.WalkDir(base, func(q string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch {
			case q == p, q == rep.Backup:
			case strings.HasPrefix(q, e.root+"/"), strings.HasPrefix(q, e.locks+"/"):
			default:
				t.Errorf("purge wrote %s", q)
			}
			return nil
		})
	}
	for _, dir := range []string{home, tmp} {
		filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
			if err == nil && q != dir {
				t.Errorf("purge wrote %s", q)
			}
			return nil
		})
	}
}
