//go:build unix

package purge

// Safety with other processes: Claude Code appending during a purge
// (D1 #1), SIGKILL at any point (D1 #2), bounded memory, and files or
// directories a purge may not write.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/purge/restore"
	"ccm/transcript/rewrite"
)

// Environment variables of the appender helper process.
const (
	envAppendTo    = "CCM_PURGE_TEST_APPEND_TO"
	envAppendCount = "CCM_PURGE_TEST_APPEND_COUNT"
	envAppendEvery = "CCM_PURGE_TEST_APPEND_EVERY"
	envAppendPause = "CCM_PURGE_TEST_APPEND_PAUSE"
	envAppendSeed  = "CCM_PURGE_TEST_APPEND_SEED"
	envMeasure     = "CCM_PURGE_TEST_MEASURE"
)

var binDir string

func TestMain(m *testing.M) {
	if p := os.Getenv(envAppendTo); p != "" {
		os.Exit(appender(p))
	}
	if p := os.Getenv(envMeasure); p != "" {
		os.Exit(measure(p))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// appendLine is the n-th line the helper appends: a record of a type
// Claude Code does not know (kept verbatim by a purge), with non-ASCII
// text.
func appendLine(n int) string {
	return fmt.Sprintf(`{"type":"ccm-test-append","n":%d,"text":"appended line %d: é ✓ 🎉 %s"}`+"\n", n, n, strings.Repeat("x", n%97))
}

// appender writes the lines the way Claude Code 2.0.14 does: one
// open(O_APPEND), write, close per entry, every envAppendEvery. With
// envAppendSeed, the gaps are random up to that, and a random pause up to
// envAppendPause comes between the open and the write, as when the writer
// is descheduled there.
func appender(path string) int {
	count, _ := strconv.Atoi(os.Getenv(envAppendCount))
	every, _ := time.ParseDuration(os.Getenv(envAppendEvery))
	pause, _ := time.ParseDuration(os.Getenv(envAppendPause))
	var rng *rand.Rand
	if seed, err := strconv.ParseUint(os.Getenv(envAppendSeed), 10, 64); err == nil {
		rng = rand.New(rand.NewPCG(seed, 0))
	}
	random := func(d time.Duration) time.Duration {
		if rng == nil || d <= 0 {
			return d
		}
		return time.Duration(rng.Int64N(int64(d)))
	}
	for n := 0; n < count; n++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if d := random(pause); d > 0 {
			time.Sleep(d)
		}
		if _, err := f.WriteString(appendLine(n)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		f.Close()
		time.Sleep(random(every))
	}
	return 0
}

// genFile writes a generated transcript of about size bytes to path.
func genFile(t testing.TB, path string, o synth.Options) synth.Manifest {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	m, err := synth.Generate(bw, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// D1 #1: the Python tool read everything, processed, truncated and wrote
// in place, and lost 538 of 768 lines appended meanwhile. Another process
// appends 1000 lines while a large file is purged: all 1000 arrive in the
// new file, unchanged and in order.
func TestConcurrentAppend(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.dir, "big.jsonl")
	genFile(t, p, synth.Options{Seed: 101, TargetBytes: 50 << 20, Thinking: true, Progress: true, Images: true, Version: "2.1.39"})
	in := readFile(t, p)

	const lines = 1000
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envAppendTo+"="+p, envAppendCount+"="+strconv.Itoa(lines), envAppendEvery+"=3ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let some lines land before the purge starts.
	for deadline := time.Now().Add(10 * time.Second); ; {
		fi, _ := os.Stat(p)
		if fi.Size() > int64(len(in))+5000 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	rep, err := File(context.Background(), p, e.opts())
	if err != nil {
		cmd.Wait()
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("appender: %v: %s", err, stderr.String())
	}
	if rep.TailBytes == 0 {
		t.Error("no line was appended during the purge: the test proves nothing")
	}
	out := readFile(t, p)
	next := 0
	for _, l := range splitLines(out) {
		if !bytes.Contains(l, []byte(`"ccm-test-append"`)) {
			continue
		}
		if want := appendLine(next); string(l)+"\n" != want {
			t.Fatalf("appended line %d: got %.100q, want %.100q", next, l, want)
		}
		next++
	}
	if next != lines {
		t.Errorf("%d of %d appended lines arrived", next, lines)
	}
	t.Logf("%d bytes appended during the purge, %d -> %d bytes", rep.TailBytes, rep.BytesBefore, rep.BytesAfter)
	mustCheck(t, out, false)
	keepsPrompts(t, in, out)
}

var ccmBuild struct {
	once sync.Once
	path string
	err  error
}

// ccmBinary builds cmd/ccm once per test binary.
func ccmBinary(t testing.TB) string {
	t.Helper()
	ccmBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "ccm-purge-test-bin-")
		if err != nil {
			ccmBuild.err = err
			return
		}
		binDir = dir
		os.Chmod(dir, 0o755)
		ccmBuild.path = filepath.Join(dir, "ccm")
		cmd := exec.Command("go", "build", "-o", ccmBuild.path, "ccm/cmd/ccm")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			ccmBuild.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if ccmBuild.err != nil {
		t.Fatal(ccmBuild.err)
	}
	return ccmBuild.path
}

// cli is a ccm command line run in its own config dir.
type cli struct {
	bin, home string
	env       []string
	cred      *syscall.Credential
}

func newCLI(t testing.TB, home string) *cli {
	c := &cli{bin: ccmBinary(t), home: home}
	c.env = append(os.Environ(),
		"HOME="+home,
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"CCM_CACHE_DIR="+filepath.Join(home, ".claude", "cache", "ccm"),
		"CCM_HOME="+filepath.Join(home, ".claude", "ccm"),
	)
	return c
}

func (c *cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

// run runs ccm and returns its exit code, stdout and stderr.
func (c *cli) run(args ...string) (int, string, string) {
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return code, out.String(), errb.String()
}

func sum(b []byte) [32]byte { return sha256.Sum256(b) }

// D1 #2: no atomic write: a crash mid-rewrite left a truncated transcript
// (and truncated blobs that dedup trusted). ccm purge is SIGKILLed at
// random points: the path always holds the original or the complete
// purged file, a purged file has its backup, every stored blob verifies,
// and the next purge completes with the same result.
func TestKillDuringPurge(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "orig.jsonl")
	genFile(t, src, synth.Options{Seed: 102, TargetBytes: 24 << 20, Thinking: true, Progress: true, Images: true, Version: "2.1.39",
		Defects: []synth.Defect{synth.DanglingParent, synth.OrphanToolUse, synth.TornLastLine}})
	orig := readFile(t, src)
	origSum := sum(orig)

	// A complete run gives the reference result, and its duration.
	ref := newCLI(t, filepath.Join(base, "ref"))
	refPath := filepath.Join(base, "ref", ".claude", "projects", "-p", "s.jsonl")
	os.MkdirAll(filepath.Dir(refPath), 0o700)
	testutil.CopyFile(t, src, refPath)
	start := time.Now()
	if code, _, stderr := ref.run("purge", "--no-tokens", refPath); code != 0 {
		t.Fatalf("reference purge: exit %d: %s", code, stderr)
	}
	took := time.Since(start)
	purged := readFile(t, refPath)
	purgedSum := sum(purged)
	if purgedSum == origSum {
		t.Fatal("the reference purge changed nothing")
	}
	mustCheck(t, purged, false)

	rng := rand.New(rand.NewPCG(102, uint64(time.Now().UnixNano())))
	outcomes := map[string]int{}
	for i := 0; i < 10; i++ {
		home := filepath.Join(base, fmt.Sprintf("run%d", i))
		c := newCLI(t, home)
		p := filepath.Join(home, ".claude", "projects", "-p", "s.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		testutil.CopyFile(t, src, p)
		delay := time.Duration(rng.Int64N(int64(took + took/5)))
		cmd := c.command("purge", "--no-tokens", p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		got := readFile(t, p)
		switch sum(got) {
		case origSum:
			outcomes["original"]++
		case purgedSum:
			outcomes["purged"]++
			// One backup of the original; a kill between the rename and
			// the end of the wait for writers may also leave the old file's
			// -held link, which is the original too (clean removes it as a
			// backup).
			bs, _ := restore.Backups(p)
			var kept []string
			for _, b := range bs {
				if sum(readBackup(t, b)) != origSum {
					t.Errorf("run %d: %s is not the original", i, b)
				}
				if !strings.HasSuffix(b, rewrite.HeldTag) {
					kept = append(kept, b)
				}
			}
			if len(kept) != 1 {
				t.Errorf("run %d: purged file without one backup of the original (%v)", i, bs)
			}
		default:
			t.Errorf("run %d (killed after %v): the transcript is neither the original nor the purged file (%d bytes)", i, delay, len(got))
			continue
		}
		// Every blob in the store is whole.
		st, err := ccm.Open(filepath.Join(home, ".claude", "cache", "ccm"))
		if err != nil {
			t.Fatal(err)
		}
		if st.Exists() {
			l, err := st.List(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range l.Entries {
				if len(en.Files) == 0 {
					continue
				}
				if err := st.Verify(en.Key); err != nil {
					t.Errorf("run %d: %v", i, err)
				}
			}
		}
		temps := func() int {
			n := 0
			entries, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".ccm-tmp-") {
					n++
				}
			}
			return n
		}
		leftAfterKill := temps()
		// No lock is left held, nothing is corrupt: purging again works
		// and ends with the reference result.
		if code, _, stderr := c.run("purge", "--no-tokens", p); code != 0 {
			t.Errorf("run %d: purge after the kill: exit %d: %s", i, code, stderr)
		}
		if sum(readFile(t, p)) != purgedSum {
			t.Errorf("run %d: purge after the kill gave a different file", i)
		}
		if n := temps(); n > 0 {
			outcomes["temp files left"] += n
			t.Logf("run %d: %d temp transcripts left by the kill, %d after the next purge", i, leftAfterKill, n)
		}
		for _, l := range splitLines(readFile(t, p)) {
			for _, s := range stubsIn(l) {
				if err := st.Verify(s.Key); err != nil {
					t.Errorf("run %d: stub %s: %v", i, s.Key, err)
				}
			}
		}
		os.RemoveAll(home)
	}
	t.Logf("reference purge took %v; outcomes %v", took, outcomes)
}

// measure purges path with the CLI's defaults for one file (store, token
// estimates) and prints the process's peak resident set size in KiB.
// It runs in a fresh process: the test binary re-executed, whose memory
// is its own (the rusage of a child also counts the parent's pages it
// shared before exec).
func measure(path string) int {
	o := DefaultOptions()
	o.Tokens = true
	st, err := ccm.Open(filepath.Join(filepath.Dir(path), "store"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o.Store = st
	o.LockDir = filepath.Join(filepath.Dir(path), "locks")
	if _, err := File(context.Background(), path, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			fmt.Println(f[1])
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "no VmHWM in /proc/self/status")
	return 1
}

// TestBoundedMemory: purging a 50 MB file stays well under 100 MB of
// resident memory, the bound for a 200 MB file (the Python tool
// used 4.3 times the file). Memory is bounded by the longest line, the
// per-record index and the content in flight to the store, never by the
// file size.
func TestBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	genFile(t, p, synth.Options{Seed: 131, TargetBytes: 50 << 20, Thinking: true, Images: true, Progress: true, Version: "2.1.330"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMeasure+"="+p)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("measure printed %q", out)
	}
	t.Logf("peak RSS %d MB", kb>>10)
	if kb > 100<<10 {
		t.Errorf("peak RSS %d MB for a 50 MB file, want under 100 MB", kb>>10)
	}
}

// unprivileged returns the credential to run ccm as when the tests run as
// root (root ignores file modes); nil otherwise. It makes the given paths
// owned by that user.
func unprivileged(t *testing.T, paths ...string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	const nobody = 65534
	for _, p := range paths {
		filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
			if err == nil {
				os.Lchown(q, nobody, nobody)
			}
			return nil
		})
	}
	// The path down to the test's temp dirs must be traversable.
	for dir := paths[0]; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(dir, fi.Mode().Perm()|0o005)
		}
	}
	os.Chmod(filepath.Dir(ccmBinary(t)), 0o755)
	return &syscall.Credential{Uid: nobody, Gid: nobody}
}

// TestReadOnly: a transcript in a read-only directory, or a read-only
// transcript, is left untouched with a clear one-line error.
func TestReadOnly(t *testing.T) {
	in := stubFixture()
	for _, c := range []struct {
		name    string
		dirMode os.FileMode
		mode    os.FileMode
	}{
		{"read-only directory", 0o555, 0o600},
		{"read-only file", 0o755, 0o400},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			cl := newCLI(t, home)
			dir := filepath.Join(home, ".claude", "projects", "-p")
			os.MkdirAll(dir, 0o755)
			p := filepath.Join(dir, "s.jsonl")
			os.WriteFile(p, in, 0o600)
			cl.cred = unprivileged(t, home)
			os.Chmod(p, c.mode)
			os.Chmod(dir, c.dirMode)
			defer os.Chmod(dir, 0o755)
			// A dry run only reads: it works on a protected transcript.
			if code, stdout, stderr := cl.run("purge", "--dry-run", "--no-tokens", p); code != 0 || !strings.Contains(stdout, "would purge") {
				t.Errorf("dry run: exit %d: %s%s", code, stdout, stderr)
			}
			code, stdout, stderr := cl.run("purge", "--no-tokens", p)
			if code == 0 {
				t.Errorf("exit 0 (%s)", stdout)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ccm: ") ||
				!strings.Contains(stderr, "s.jsonl") || !strings.Contains(strings.ToLower(stderr), "permission denied") && !strings.Contains(strings.ToLower(stderr), "read-only") {
				t.Errorf("stderr is not one clear line: %q", stderr)
			}
			if !bytes.Equal(readFile(t, p), in) {
				t.Error("the transcript changed")
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != c.mode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), c.mode)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory holds %v", names)
			}
		})
	}
}

// TestModeKept: the purged file keeps the original's mode and its
// modification time (by which the current session is picked).
func TestModeKept(t *testing.T) {
	e := newEnv(t)
	p := e.write("s.jsonl", stubFixture())
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	rep, _ := e.purge(p, e.opts())
	fi, _ := os.Stat(p)
	if !rep.Changed || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after purge %v, want 0640", fi.Mode().Perm())
	}
	if !fi.ModTime().Equal(mtime) {
		t.Errorf("modification time after purge %v, want %v", fi.ModTime(), mtime)
	}
	assertNoTemp(t, e.dir)
	// The backup is a hard link to the original inode by default.
	bfi, _ := os.Stat(rep.Backup)
	if st, ok := bfi.Sys().(*syscall.Stat_t); !ok || st.Nlink != 1 {
		// After the rename the backup is the inode's only name.
		t.Errorf("backup link count %v", bfi.Sys())
	}
	if gjson.ValidBytes(readFile(t, p)) {
		t.Error("a whole transcript should not parse as one JSON value")
	}
}

// TestDiskFull: a write that fails midway (the file size limit stands in
// for a full disk: writes fail with EFBIG) leaves the transcript as it
// was, no temp file, and a one-line error.
func TestDiskFull(t *testing.T) {
	base := t.TempDir()
	gsrc := filepath.Join(base, "gen.jsonl")
	genFile(t, gsrc, synth.Options{Seed: 151, TargetBytes: 3 << 20, Thinking: true, Progress: true, Images: true})
	// One incompressible 600 KB output in a small session: its blob is
	// the only file over the limit.
	hsrc := filepath.Join(base, "hand.jsonl")
	noise := make([]byte, 450<<10)
	for i := range noise {
		noise[i] = byte(rand.Uint32())
	}
	os.WriteFile(hsrc, jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"cat blob"}`),
		toolResult("r1", "a1", "t1", js(base64.StdEncoding.EncodeToString(noise))),
		assistantText("a2", "r1", "m2", "ok"),
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "three"),
		assistantText("a4", "u3", "m4", "ok"),
	), 0o600)
	for _, c := range []struct {
		name, src, want string
		args            []string
	}{
		// A blob hits the limit.
		{"store", hsrc, "store", nil},
		// No store: the new transcript hits it.
		{"transcript", gsrc, "s.jsonl", []string{"--no-ccm"}},
	} {
		src := c.src
		orig := readFile(t, src)
		t.Run(c.name, func(t *testing.T) {
			home := filepath.Join(base, "home-"+strconv.Itoa(len(c.args)))
			cl := newCLI(t, home)
			dir := filepath.Join(home, ".claude", "projects", "-p")
			os.MkdirAll(dir, 0o700)
			p := filepath.Join(dir, "s.jsonl")
			testutil.CopyFile(t, src, p)
			// 200 KiB: ulimit -f counts 1024-byte blocks in bash, 512 in
			// dash; either is far below what the purge writes.
			args := append([]string{"-c", `ulimit -f 400 && exec "$0" "$@"`, cl.bin, "purge", "--no-tokens"}, c.args...)
			cmd := exec.Command("sh", append(args, p)...)
			cmd.Env = cl.env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatal("purge succeeded under a 200 KB file size limit")
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Errorf("exit: %v, want 2", err)
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "ccm: ") || !strings.Contains(msg, "file too large") || !strings.Contains(msg, c.want) {
				t.Errorf("stderr: %q", msg)
			}
			if !bytes.Equal(readFile(t, p), orig) {
				t.Error("the transcript changed")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("%d files in the transcript dir, want only the transcript", len(entries))
			}
		})
	}
}

// After the rename a purge waits for the old file to be closed, not a
// fixed time: with no other process holding it, it is done within a few
// settle periods. A process that keeps the file open for writing
// (through its own descriptor, unlike Claude Code) is seen before the
// rename and the purge refuses, leaving the file as it was. One that
// opened it in the instant before the rename is waited for until
// HeldWait and then reported, with the old file that keeps a name for it:
// what it writes now goes there.
func TestHeldOpenReported(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: the purge waits lateWait instead")
	}
	e := newEnv(t)
	in := stubFixture()

	p := e.write("free.jsonl", in)
	start := time.Now()
	rep, _ := e.purge(p, e.opts())
	if len(rep.HeldOpen)+len(rep.Kept) != 0 {
		t.Errorf("nobody holds the file, reported %v, kept %v", rep.HeldOpen, rep.Kept)
	}
	free := time.Since(start)

	// sleep holds a descriptor of the transcript open for writing.
	holdOpen := func(p string) *exec.Cmd {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		child := exec.Command("sleep", "30")
		child.ExtraFiles = []*os.File{f}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { child.Process.Kill(); child.Wait() })
		return child
	}

	p = e.write("held.jsonl", in)
	child := holdOpen(p)
	_, err := File(context.Background(), p, e.opts())
	var held *rewrite.HeldOpenError
	if !errors.As(err, &held) || !slices.Equal(held.Pids, []int{child.Process.Pid}) {
		t.Errorf("purge of a held file: %v, want held open by %d", err, child.Process.Pid)
	}
	if !bytes.Equal(readFile(t, p), in) {
		t.Error("the held file changed")
	}
	if bs, _ := restore.Backups(p); len(bs) != 0 {
		t.Errorf("backups left: %v", bs)
	}

	p = e.write("racing.jsonl", in)
	defer rewrite.SetHooks(p, rewrite.Hooks{BeforeRename: func(n int) {
		if n == 0 {
			child = holdOpen(p)
		}
	}})()
	start = time.Now()
	rep, _ = e.purge(p, e.opts())
	took := time.Since(start)
	if !slices.Equal(rep.HeldOpen, []int{child.Process.Pid}) {
		t.Errorf("held open by %v, want [%d]", rep.HeldOpen, child.Process.Pid)
	}
	// The old file keeps a name for the writer: the backup when it is a
	// hard link, else a -held link (the default backup is a compressed
	// copy, a new file the writer cannot reach).
	switch {
	case len(rep.Kept) != 1:
		t.Errorf("kept %v, want the old file under one name", rep.Kept)
	case strings.HasSuffix(rep.Backup, rewrite.ZstdExt) && !strings.HasSuffix(rep.Kept[0], rewrite.HeldTag):
		t.Errorf("kept %v, want a %s link beside the compressed backup %s", rep.Kept, rewrite.HeldTag, rep.Backup)
	case !strings.HasSuffix(rep.Backup, rewrite.ZstdExt) && rep.Kept[0] != rep.Backup:
		t.Errorf("kept %v, want the backup %s", rep.Kept, rep.Backup)
	}
	if took < rewrite.HeldWait {
		t.Errorf("a held file was waited for %v, less than %v", took, rewrite.HeldWait)
	}
	t.Logf("purge with the old file free: %v; held: %v", free, took)
	if free >= took {
		t.Errorf("the purge of a free file (%v) waited as long as for a held one (%v)", free, took)
	}
}
