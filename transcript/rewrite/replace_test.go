package rewrite

// Appends that race the rename, made exact with the rewrite's hooks: a
// writer that opens the file before a rename and writes after it, a line
// torn across the rename, races at every swap; and writers that hold the
// file open, as separate processes (the system shows only other
// processes' descriptors).

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/testutil"
)

// Environment of the holder helper process.
const (
	envHoldPath  = "CCM_REWRITE_TEST_HOLD"
	envHoldLines = "CCM_REWRITE_TEST_HOLD_LINES"
)

func TestMain(m *testing.M) {
	if p := os.Getenv(envHoldPath); p != "" {
		os.Exit(holder(p))
	}
	os.Exit(m.Run())
}

// holdLine is the n-th line the holder writes.
func holdLine(n int) string { return fmt.Sprintf(`{"type":"held","n":%d}`+"\n", n) }

// holder opens path for appending once, says so on stdout, and writes
// its lines through that one descriptor, one every millisecond.
func holder(path string) int {
	n, _ := strconv.Atoi(os.Getenv(envHoldLines))
	f, err := fsutil.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("open")
	for i := 0; i < n; i++ {
		if _, err := f.WriteString(holdLine(i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	return 0
}

// startHolder starts a holder of path writing n lines and returns once it
// has the file open.
func startHolder(t *testing.T, path string, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHoldPath+"="+path, envHoldLines+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || l != "open\n" {
		t.Fatalf("holder: %q, %v", l, err)
	}
	return cmd
}

// original is the transcript the tests rewrite: lines a rewrite turns from
// "old" to "new".
func original(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"type":"line","n":%d,"v":"old"}`+"\n", i)
	}
	return b.Bytes()
}

// rewritten is what the rewrite makes of original(n).
func rewritten(n int) []byte { return bytes.ReplaceAll(original(n), []byte(`"old"`), []byte(`"new"`)) }

// file writes original(n) to a transcript in a new directory, with a
// modification time age ago.
func file(t *testing.T, n int, age time.Duration) string {
	t.Helper()
	path := filepath.Join(testutil.TempDir(t), "s.jsonl")
	if err := os.WriteFile(path, original(n), 0o600); err != nil {
		t.Fatal(err)
	}
	if age > 0 {
		at := time.Now().Add(-age)
		os.Chtimes(path, at, at)
	}
	return path
}

// replace rewrites path as the tests do: its complete lines with "old"
// turned to "new".
func replace(t *testing.T, path string, mode BackupMode) (Result, error) {
	t.Helper()
	src, err := fsutil.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fi, _ := src.Stat()
	limit, err := LastLineEnd(src, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	produce := func(w io.Writer) (bool, error) {
		b := make([]byte, limit)
		if _, err := src.ReadAt(b, 0); err != nil {
			return false, err
		}
		_, err := w.Write(bytes.ReplaceAll(b, []byte(`"old"`), []byte(`"new"`)))
		return true, err
	}
	return Replace(path, src, limit, mode, "", time.Now(), produce, nil)
}

// appendLine writes one line to path as Claude Code does: open with
// O_APPEND, write, close.
func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f := openAppend(t, path)
	write(t, f, line)
	f.Close()
}

func openAppend(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := fsutil.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func write(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// detections runs f once with the system's view of open files and once
// with the portable path (CCM_LIVE_DETECT=portable).
func detections(t *testing.T, f func(t *testing.T)) {
	t.Run("proc", func(t *testing.T) {
		seesWriters(t)
		f(t)
	})
	t.Run("portable", func(t *testing.T) {
		t.Setenv(fsutil.LiveDetectEnv, "portable")
		f(t)
	})
}

var modes = []BackupMode{BackupLink, BackupCopy, BackupZstd, BackupNone}

// A writer opens the file right before the rename and writes its line
// right after it; the next line is opened after the rename. The first
// went to the old file, the second to the new one, and the transcript
// has them in the order they were written, whatever the backup.
func TestLateLineKeepsOrder(t *testing.T) {
	detections(t, func(t *testing.T) {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) {
				path := file(t, 50, time.Hour)
				var w1 *os.File
				defer SetHooks(path, Hooks{
					BeforeRename: func(n int) {
						if n == 0 {
							w1 = openAppend(t, path)
						}
					},
					AfterRename: func(n int) {
						if n == 0 {
							write(t, w1, "late\n")
							w1.Close()
							appendLine(t, path, "next\n")
						}
					},
				})()
				res, err := replace(t, path, mode)
				if err != nil {
					t.Fatal(err)
				}
				want := string(rewritten(50)) + "late\nnext\n"
				if got := readFile(t, path); got != want {
					t.Fatalf("transcript ends %q, want %q", tail(got), tail(want))
				}
				if res.Swaps != 2 || res.TailBytes != int64(len("late\nnext\n")) {
					t.Errorf("swaps %d, tail %d bytes", res.Swaps, res.TailBytes)
				}
				if !res.Blind && len(res.Kept)+len(res.HeldOpen) > 0 {
					t.Errorf("kept %v for %v: nothing holds the old files", res.Kept, res.HeldOpen)
				}
				checkNames(t, path, res, mode)
			})
		}
	})
}

// A race at every swap, three times over: each swap that puts late lines
// in place has its own late line and its own next line, and all six end
// in the order written.
func TestRacesAtEverySwap(t *testing.T) {
	detections(t, func(t *testing.T) {
		path := file(t, 20, time.Hour)
		files := map[int]*os.File{}
		var want []string
		defer SetHooks(path, Hooks{
			BeforeRename: func(n int) {
				if n < 3 {
					files[n] = openAppend(t, path)
				}
			},
			AfterRename: func(n int) {
				if n < 3 {
					late, next := fmt.Sprintf("late %d\n", n), fmt.Sprintf("next %d\n", n)
					write(t, files[n], late)
					files[n].Close()
					appendLine(t, path, next)
					want = append(want, late, next)
				}
			},
		})()
		res, err := replace(t, path, BackupCopy)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := readFile(t, path), string(rewritten(20))+strings.Join(want, ""); got != w {
			t.Fatalf("transcript ends %q, want %q", tail(got), tail(w))
		}
		if res.Swaps != 4 {
			t.Errorf("%d swaps, want 4", res.Swaps)
		}
		checkNames(t, path, res, BackupCopy)
	})
}

// Where the system cannot tell who has the file open, the old file of a
// transcript written to lately keeps a name, and that of one left alone
// for longer than transcript.LiveWindow does not.
func TestPortableKeepsLiveOldFile(t *testing.T) {
	t.Setenv(fsutil.LiveDetectEnv, "portable")
	for _, c := range []struct {
		name string
		age  time.Duration
		kept bool
	}{{"live", 0, true}, {"idle", time.Hour, false}} {
		t.Run(c.name, func(t *testing.T) {
			path := file(t, 10, c.age)
			res, err := replace(t, path, BackupZstd)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Blind {
				t.Error("not reported blind")
			}
			if kept := len(res.Kept) == 1; kept != c.kept {
				t.Fatalf("kept %v", res.Kept)
			}
			if c.kept {
				if got := readFile(t, res.Kept[0]); got != string(original(10)) {
					t.Errorf("kept file holds %q", tail(got))
				}
			}
			checkNames(t, path, res, BackupZstd)
		})
	}
}

// seesWriters skips a test where the system cannot tell which processes
// have a file open.
func seesWriters(t *testing.T) {
	t.Helper()
	f, err := os.CreateTemp(testutil.TempDir(t), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if _, ok := fsutil.Writers(f.Name(), fi); !ok {
		t.Skip("this system cannot tell which processes have a file open")
	}
}

// heldLines are the holder's lines from to to.
func heldLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(holdLine(i))
	}
	return b.String()
}

// checkNames checks the files beside the transcript after a rewrite: the
// backup the mode asks for, the files the result says it kept, and
// nothing else (no temp file, no link left over).
func checkNames(t *testing.T, path string, res Result, mode BackupMode) {
	t.Helper()
	want := map[string]bool{filepath.Base(path): true}
	if mode != BackupNone {
		if res.Backup == "" {
			t.Errorf("no %s backup", mode)
		}
		want[filepath.Base(res.Backup)] = true
	}
	for _, k := range res.Kept {
		want[filepath.Base(k)] = true
	}
	for _, n := range dirNames(t, path) {
		if !want[n] {
			t.Errorf("left beside the transcript: %s", n)
		}
		delete(want, n)
	}
	for n := range want {
		t.Errorf("missing: %s", n)
	}
}

func dirNames(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tail is the end of a transcript, for messages.
func tail(s string) string {
	if len(s) > 160 {
		return "…" + s[len(s)-160:]
	}
	return s
}
