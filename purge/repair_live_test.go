// Repairs in a live session (the call in flight and the last turn left
// alone, the live window, the writer it needs), repairs of thinking
// signatures, and purges through symlinks.

package purge

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"ccm/internal/synth"
	"ccm/transcript"
	"ccm/transcript/rewrite"

	"github.com/tidwall/gjson"
)

// inFlight is a session whose last turn is running a tool right now.
func inFlight() []byte {
	return jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		userPrompt("u2", "a1", "/purge"),
		assistantToolUse("a2", "u2", "m2", "t9", "Bash", `{"command":"ccm purge --current -v"}`),
	)
}

// TestInFlightLive: the in-flight last turn of a live session (--current)
// is left alone; purged as a file, the call gets a result.
func TestInFlightLive(t *testing.T) {
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("live session: the in-flight call was repaired (%+v)", rep.Stats)
	}
	o.Live = false
	rep, out = e.purgeBytes(in, o)
	if rep.SynthesizedResults != 1 {
		t.Errorf("not live: %d results synthesised, want 1", rep.SynthesizedResults)
	}
	if l := splitLines(out); !isSynthResult(l[len(l)-1]) {
		t.Errorf("last line is not the synthesised result: %s", l[len(l)-1])
	}
	mustCheck(t, out, false)
}

// TestLiveWindow: a transcript written to within transcript.LiveWindow is purged as
// live (ccm purge run from inside Claude Code on its own session, named by
// path); one untouched for longer is not.
func TestLiveWindow(t *testing.T) {
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.InferLive = true
	p := e.write("fresh.jsonl", in)
	rep, out := e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("just written: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
	p = e.write("old.jsonl", in)
	old := time.Now().Add(-transcript.LiveWindow - time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	rep, _ = e.purge(p, o)
	if rep.Live || rep.SynthesizedResults != 1 {
		t.Errorf("untouched for 3 minutes: live %v, %d results synthesised, want 1", rep.Live, rep.SynthesizedResults)
	}
}

// TestLiveNeedsWriter: a file the user names that was just written but
// that no process holds open for writing (a fresh copy, a checkout) is
// not live; while another process holds it open for writing it is.
func TestLiveNeedsWriter(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: writers cannot be told here, the mtime rule applies")
	}
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.InferLive = true
	o.LiveNeedsWriter = true
	p := e.write("copied.jsonl", in)
	rep, _ := e.purge(p, o)
	if rep.Live || rep.SynthesizedResults != 1 {
		t.Errorf("fresh copy without writer: live %v, %d results synthesised, want 1", rep.Live, rep.SynthesizedResults)
	}
	p = e.write("held.jsonl", in)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer func() { child.Process.Kill(); child.Wait() }()
	rep, out := e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("held open for writing: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
	// Claude Code opens the file by path for each line: between two lines
	// its process, running in the transcript's project, is the sign.
	cwd := t.TempDir()
	dir := filepath.Join(t.TempDir(), transcript.ProjectDirName(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(dir, "running.jsonl")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(sleep, claude); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command(claude, "30")
	cc.Dir = cwd
	if err := cc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cc.Process.Kill(); cc.Wait() }()
	rep, out = e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("claude running in its project: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
}

// TestInFlightLiveSynth: the generator's in-flight ending, with progress
// records in the running turn, stays byte for byte in a live purge.
func TestInFlightLiveSynth(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 51, Turns: 6, Progress: true, Thinking: true, InFlight: true, Version: "2.1.39"})
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != 0 {
		t.Errorf("live: %d results synthesised", rep.SynthesizedResults)
	}
	// The in-flight message and everything after it are byte-identical,
	// and the running turn keeps its progress records (Claude Code may
	// still name them as parents).
	lines := splitLines(in)
	lastPrompt, lastUse := -1, -1
	for i, l := range lines {
		if isObject(l) && isUserPrompt(l) {
			lastPrompt = i
		}
		if bytes.Contains(l, []byte(`"type":"tool_use"`)) {
			lastUse = i
		}
	}
	tail := bytes.Join(lines[lastUse:], []byte{'\n'})
	if !bytes.HasSuffix(out, append(tail, '\n')) {
		t.Error("the in-flight call or what follows it changed in a live purge")
	}
	for _, l := range lines[lastPrompt:] {
		if gjson.GetBytes(l, "type").Str == "progress" && lineOf(out, gjson.GetBytes(l, "uuid").Str) == nil {
			t.Errorf("a progress record of the running turn was dropped: %.120s", l)
		}
	}
	mustCheck(t, out, false)
}

// TestToolPairSynth: every planted pairing defect is repaired.
func TestToolPairSynth(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 61, Turns: 30, Thinking: true, Defects: []synth.Defect{
		synth.OrphanToolUse, synth.OrphanToolUse, synth.OrphanToolResult, synth.EmptyContent, synth.EmptyText}})
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != len(m.DefectsOf(synth.OrphanToolUse)) {
		t.Errorf("synthesised %d, planted %d orphan tool_uses", rep.SynthesizedResults, len(m.DefectsOf(synth.OrphanToolUse)))
	}
	// The generator hangs an orphan result off the round's other
	// tool_use line: a dead branch the resume walk never sends. Whether it
	// stays or goes, it must not be on the chain.
	ix := index(t, out)
	c := ix.ActiveChain()
	for _, d := range m.DefectsOf(synth.OrphanToolResult) {
		if i, ok := ix.Lookup(d.UUID); ok && c.Reached(i) {
			t.Errorf("orphan result %s is on the active chain", d.ToolUseID)
		}
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// TestRepairUnsignedThinking: a thinking block without a signature is
// rejected by the API wherever it is sent. With --keep-thinking (or
// --repair-only) the old unsigned block must still go, or the purged
// file fails ccm check.
func TestRepairUnsignedThinking(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"no signature here"}]}`), "uuid", "a1"),
		assistantText("a2", "a1", "m1", "answer"),
		userPrompt("u2", "a2", "two"),
		assistantThinking("a3", "u2", "m2", "signed", sig),
		assistantText("a4", "a3", "m2", "ok"),
	)
	if len(checkErrors(t, in, false)) == 0 {
		t.Fatal("the fixture passes check")
	}
	for _, name := range []string{"keep-thinking", "repair-only"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.KeepThinking = name == "keep-thinking"
			o.RepairOnly = name == "repair-only"
			rep, out := e.purgeBytes(in, o)
			mustCheck(t, out, false)
			if !bytes.Equal(lineOf(out, "a3"), lineOf(in, "a3")) {
				t.Error("the latest message's signed thinking changed")
			}
			e.invariants(in, rep.Path, o, false)
		})
	}
}

// TestRepairPlaceholderSignature: a thinking block whose signature is a
// placeholder ("[REDACTED_SIGNATURE]", as some tools leave them) is
// rejected by the API like an unsigned one, even in the latest message:
// the purge removes it there too, under --keep-thinking as well, and the
// purged file passes ccm check.
func TestRepairPlaceholderSignature(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantThinking("a1", "u1", "m1", "old", "[REDACTED_SIGNATURE]"),
		assistantText("a2", "a1", "m1", "answer"),
		userPrompt("u2", "a2", "two"),
		assistantThinking("a3", "u2", "m2", "latest", "[REDACTED_SIGNATURE]"),
		assistantText("a4", "a3", "m2", "ok"),
	)
	if n := len(checkErrors(t, in, false)); n != 2 {
		t.Fatalf("the fixture has %d check errors, want 2", n)
	}
	for _, keep := range []bool{false, true} {
		e := newEnv(t)
		o := e.opts()
		o.KeepThinking = keep
		rep, out := e.purgeBytes(in, o)
		mustCheck(t, out, false)
		if bytes.Contains(out, []byte("REDACTED_SIGNATURE")) {
			t.Errorf("keep-thinking %v: a placeholder signature is left", keep)
		}
		if keep && rep.RemovedBrokenThinking != 2 {
			t.Errorf("keep-thinking: %d blocks repaired, want 2", rep.RemovedBrokenThinking)
		}
		e.invariants(in, rep.Path, o, false)
	}
}

// TestLiveTipKept: in a live purge the records Claude Code may still name
// as parents (the running turn's progress records, the in-flight call)
// stay, so what it appends after the purge attaches to the chain.
func TestLiveTipKept(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantThinking("a0", "u1", "m0", "old", sig),
		assistantText("a1", "a0", "m0", "ok"),
		progress("p0", "a1"),
		userPrompt("u2", "p0", "/purge"),
		assistantToolUse("a2", "u2", "m2", "t1", "Bash", `{"command":"ccm purge --current"}`),
		progress("p1", "a2"),
	)
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.Live = true
	rep, _ := e.purge(p, o)
	if rep.DroppedProgress != 1 || rep.ThinkingRemoved != 1 {
		t.Errorf("live purge: %+v", rep.Stats)
	}
	// Claude Code carries on from the record it wrote last.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(toolResult("r1", "p1", "t1", `"purged"`) + "\n" + assistantText("a3", "r1", "m3", "done") + "\n" + userPrompt("u3", "a3", "thanks") + "\n")
	f.Close()
	out := readFile(t, p)
	mustCheck(t, out, false)
	for _, u := range []string{"u1", "u2", "u3"} {
		if !chainPrompts(t, out)[u] {
			t.Errorf("prompt %s is not on the chain after Claude Code's appends", u)
		}
	}
}

// One transcript has one sidecar lock, whether it is named through a
// symlink or by its real path.
func TestLockPathThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(real, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if a, b := rewrite.LockPath("/locks", real), rewrite.LockPath("/locks", link); a != b {
		t.Errorf("real path lock %s, symlink lock %s", a, b)
	}
	if rewrite.LockPath("/locks", real) == rewrite.LockPath("/locks", filepath.Join(dir, "other.jsonl")) {
		t.Error("two transcripts share a lock")
	}
}

// A transcript named through a symlink is purged where it lives: the link
// stays a link, and the real file is the purged one, with its backup
// beside it.
func TestPurgeThroughSymlink(t *testing.T) {
	e := newEnv(t)
	real := e.write("real.jsonl", stubFixture())
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	rep, err := File(context.Background(), link, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed || rep.Path != link {
		t.Fatalf("changed %v, report path %s", rep.Changed, rep.Path)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (%v)", err)
	}
	if bytes.Equal(readFile(t, real), stubFixture()) {
		t.Error("the real file was not purged")
	}
	if filepath.Dir(rep.Backup) != filepath.Dir(real) {
		t.Errorf("backup %s is not beside the real file", rep.Backup)
	}
	rr, err := restoreFile(context.Background(), link, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rr.Restored == 0 || !bytes.Equal(readFile(t, real), stubFixture()) {
		t.Errorf("restore through the link: %d stubs, file back: %v", rr.Restored, bytes.Equal(readFile(t, real), stubFixture()))
	}
}
