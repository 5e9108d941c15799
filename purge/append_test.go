//go:build unix

package purge

// The purge invariants with lines appended during the renames: on every
// corpus transcript and on generated ones, with the system's view of open
// files and with the portable path (CCM_LIVE_DETECT=portable), a writer
// opens the file before each of the first two renames and writes after
// it, and the next record goes to the new file. The result is the purge
// of the original followed by those records in the order written; it
// passes ccm check, keeps every prompt, purges again to itself, and
// restores exactly to the restore of the purge without them followed by
// them.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"ccm/internal/fsutil"
	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/sessions"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// appended returns n records for writers to append, each the child of
// the one before, the first a child of in's last record on its chain.
// Their type is one Claude Code does not know, which a purge keeps
// verbatim and which changes nothing it plans: a second purge must leave
// the file as it is.
func appended(t testing.TB, in []byte, n int) []string {
	t.Helper()
	ix := index(t, in)
	c := ix.ActiveChain()
	parent := ""
	if len(c.Recs) > 0 {
		parent = ix.Rec(c.Recs[len(c.Recs)-1]).UUID()
	}
	out := make([]string, n)
	for i := range out {
		uuid := fmt.Sprintf("ccm-append-%d", i)
		out[i] = rec("parentUuid", nullable(parent), "type", "ccm-test-append", "uuid", uuid,
			"text", fmt.Sprintf("appended during the rename %d é ✓ %s", i, strings.Repeat("x", 40*i))) + "\n"
		parent = uuid
	}
	return out
}

// purgeRacing purges path while writers race its first two renames: a
// writer opens the file right before the rename and writes its record
// right after it (to the old file), then the next record is written to
// the new file, as Claude Code writes, open, write, close. It returns the
// report and the records written, in order.
func (e *env) purgeRacing(path string, o Options, recs []string) (*Report, []string) {
	e.t.Helper()
	var written []string
	opened := map[int]*os.File{}
	defer rewrite.SetHooks(path, rewrite.Hooks{
		BeforeRename: func(n int) {
			if n < 2 {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					e.t.Error(err)
					return
				}
				opened[n] = f
			}
		},
		AfterRename: func(n int) {
			f := opened[n]
			if f == nil {
				return
			}
			if _, err := f.WriteString(recs[2*n]); err != nil {
				e.t.Error(err)
			}
			f.Close()
			g, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				e.t.Error(err)
				return
			}
			if _, err := g.WriteString(recs[2*n+1]); err != nil {
				e.t.Error(err)
			}
			g.Close()
			written = append(written, recs[2*n], recs[2*n+1])
		},
	})()
	rep, _ := e.purge(path, o)
	return rep, written
}

// terminated is in with a newline after its last line: Claude Code's next
// append would be glued to a line without one, records and all.
func terminated(in []byte) []byte {
	if len(in) > 0 && in[len(in)-1] != '\n' {
		return append(append([]byte(nil), in...), '\n')
	}
	return in
}

// appendInvariants checks a purge of in with racing writers, under o:
// the result is the purge of in without them (ref) followed by what they
// wrote, in order; it passes check, keeps every prompt, changes lines only
// as a purge may, and purges again to itself; and it restores exactly to
// the restore of ref followed by what they wrote (which is in itself
// followed by them wherever a purge of in restores to in).
func (e *env) appendInvariants(in []byte, name string, o Options, sub bool) {
	e.t.Helper()
	refPath := e.write("ref-"+filepath.Base(name), in)
	e.purge(refPath, o)
	ref := readFile(e.t, refPath)
	p := e.write(name, in)
	rep, written := e.purgeRacing(p, o, appended(e.t, in, 4))
	out := readFile(e.t, p)
	if !rep.Changed {
		if len(written) != 0 || !bytes.Equal(out, in) {
			e.t.Errorf("an unchanged file was replaced")
		}
		return
	}
	if len(written) != 4 || rep.Swaps != 3 {
		e.t.Fatalf("the writers raced %d renames of %d", len(written)/2, rep.Swaps)
	}
	if want := string(ref) + strings.Join(written, ""); string(out) != want {
		e.t.Errorf("the purge with racing writers is not the purge followed by their records in order")
		reportFirstDiff(e.t, []byte(want), out)
	}
	if !fsutil.PortableDetect() && len(rep.Kept) > 0 {
		e.t.Errorf("kept %v with no writer left", rep.Kept)
	}
	e.invariants(append(append([]byte(nil), in...), strings.Join(written, "")...), p, o, sub)
	if rep.Stubs == 0 {
		return
	}
	restored := func(p string) []byte {
		if _, err := restoreFile(context.Background(), p, o); err != nil {
			e.t.Fatal(err)
		}
		return readFile(e.t, p)
	}
	if want, got := string(restored(refPath))+strings.Join(written, ""), restored(p); string(got) != want {
		e.t.Errorf("restore after a purge with racing writers is not the restore without them followed by their records")
		reportFirstDiff(e.t, []byte(want), got)
	}
}

// bothDetections runs f with the system's view of open files and with the
// portable path.
func bothDetections(t *testing.T, f func(t *testing.T)) {
	t.Run("proc", func(t *testing.T) {
		if _, err := os.Stat("/proc/self/fd"); err != nil {
			t.Skip("no /proc: only the portable path runs here")
		}
		f(t)
	})
	t.Run("portable", func(t *testing.T) {
		t.Setenv(fsutil.LiveDetectEnv, "portable")
		f(t)
	})
}

// each runs f as a subtest for every name, four at a time whatever
// -parallel says: the portable path's waits are sleeps, not work.
func each(t *testing.T, names []string, f func(t *testing.T, i int)) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(name, func(t *testing.T) { f(t, i) })
		}()
	}
	wg.Wait()
}

// TestAppendInvariantsCorpus: every corpus transcript, subagent files
// included.
func TestAppendInvariantsCorpus(t *testing.T) {
	root := testutil.CopyCorpus(t)
	var files, names []string
	err := sessions.Walk(filepath.Join(root, "projects"), func(p string, _ fs.DirEntry) error {
		rel, _ := filepath.Rel(root, p)
		files, names = append(files, p), append(names, strings.ReplaceAll(rel, "/", "|"))
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bothDetections(t, func(t *testing.T) {
		each(t, names, func(t *testing.T, i int) {
			p := files[i]
			sub := transcript.IsSubagentPath(p)
			name := filepath.Base(p)
			if sub {
				name = "sess/subagents/" + name
			}
			e := newEnv(t)
			e.appendInvariants(terminated(readFile(t, p)), name, e.opts(), sub)
		})
	})
}

// TestAppendInvariantsSynth: generated transcripts of every kind of
// ending and record (compactions, sidechains, a call in flight, both
// formats, every defect); TestInvariantsSynth has them all without
// writers.
func TestAppendInvariantsSynth(t *testing.T) {
	var cases []struct {
		name string
		o    synth.Options
	}
	for _, c := range synthCases() {
		switch c.name {
		case "plain", "compactions", "sidechains", "inflight", "v2.1.330-compact", "all-defects", "everything", "client-shapes-and-defects":
			cases = append(cases, c)
		}
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	bothDetections(t, func(t *testing.T) {
		each(t, names, func(t *testing.T, i int) {
			in, _ := gen(t, cases[i].o)
			e := newEnv(t)
			e.appendInvariants(terminated(in), "s.jsonl", e.opts(), false)
		})
	})
}

// TestConcurrentAppendRandom: another process appends lines as Claude
// Code does, with random pauses between its open and its write and
// between lines, while files are purged again and again; every line
// arrives once, in the order written, with either detection.
func TestConcurrentAppendRandom(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 141, TargetBytes: 2 << 20, Thinking: true, Progress: true, Images: true})
	bothDetections(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(141, 0))
		swaps := 0
		for trial := 0; trial < 8; trial++ {
			e := newEnv(t)
			p := e.write("s.jsonl", in)
			const lines = 300
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envAppendTo+"="+p, envAppendCount+"="+strconv.Itoa(lines),
				envAppendEvery+"=1ms", envAppendPause+"=1ms", envAppendSeed+"="+strconv.FormatUint(rng.Uint64(), 10))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			rep, err := File(context.Background(), p, e.opts())
			if werr := cmd.Wait(); werr != nil {
				t.Fatalf("appender: %v: %s", werr, stderr.String())
			}
			if err != nil {
				t.Fatal(err)
			}
			swaps += rep.Swaps
			out := readFile(t, p)
			next := 0
			for _, l := range splitLines(out) {
				if !bytes.Contains(l, []byte(`"ccm-test-append"`)) {
					continue
				}
				if want := appendLine(next); string(l)+"\n" != want {
					t.Fatalf("trial %d: appended line %d: got %.100q, want %.100q", trial, next, l, want)
				}
				next++
			}
			if next != lines {
				t.Fatalf("trial %d: %d of %d appended lines arrived", trial, next, lines)
			}
			mustCheck(t, out, false)
		}
		t.Logf("%d renames in 8 purges", swaps)
	})
}
