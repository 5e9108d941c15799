//go:build unix

package purge

// Safety with other processes: Claude Code appending during a purge,
// SIGKILL at any point (claude-context-manager lost lines to both,
// docs/earlier-tools.md), bounded memory, and files or
// directories a purge may not write.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
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

// claude-context-manager read everything, processed, truncated and wrote
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
// resident memory, the bound for a 200 MB file (claude-context-manager
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

	p = e.write("held.jsonl", in)
	pid := testutil.HoldOpenForWriting(t, p)
	_, err := File(context.Background(), p, e.opts())
	var held *rewrite.HeldOpenError
	if !errors.As(err, &held) || !slices.Equal(held.Pids, []int{pid}) {
		t.Errorf("purge of a held file: %v, want held open by %d", err, pid)
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
			pid = testutil.HoldOpenForWriting(t, p)
		}
	}})()
	start = time.Now()
	rep, _ = e.purge(p, e.opts())
	took := time.Since(start)
	if !slices.Equal(rep.HeldOpen, []int{pid}) {
		t.Errorf("held open by %v, want [%d]", rep.HeldOpen, pid)
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
