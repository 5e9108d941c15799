//go:build unix

// Safety with the file system: files and directories a purge may not
// write, the mode kept, a full disk.

package purge

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccm/internal/synth"
	"ccm/internal/testutil"

	"github.com/tidwall/gjson"
)

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

// TestReadOnly: a transcript in a read-only directory, where its new
// version cannot be renamed into place, is left untouched with a clear
// one-line error. (A read-only transcript in a writable directory is
// purged: TestReadOnlyFile.)
func TestReadOnly(t *testing.T) {
	in := stubFixture()
	for _, c := range []struct {
		name    string
		dirMode os.FileMode
		mode    os.FileMode
	}{
		{"read-only directory", 0o555, 0o600},
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

// TestReadOnlyFile: a read-only transcript in a writable directory (a
// copy of a read-only original, as cp makes it) is purged like any other,
// run as a user the kernel holds to the mode: the new version keeps the
// mode, check passes, and restore --backup brings the bytes back, mode
// and all.
func TestReadOnlyFile(t *testing.T) {
	in := stubFixture()
	home := t.TempDir()
	cl := newCLI(t, home)
	dir := filepath.Join(home, ".claude", "projects", "-p")
	os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, "s.jsonl")
	os.WriteFile(p, in, 0o600)
	cl.cred = unprivileged(t, home)
	os.Chmod(p, 0o400)
	if code, stdout, stderr := cl.run("purge", "--no-tokens", p); code != 0 || stderr != "" {
		t.Fatalf("purge of a read-only transcript: exit %d: %s%s", code, stdout, stderr)
	}
	if bytes.Equal(readFile(t, p), in) {
		t.Error("the transcript was not purged")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o400 {
		t.Errorf("mode %v after the purge, want 0400", fi.Mode().Perm())
	}
	if code, stdout, stderr := cl.run("check", p); code != 0 || strings.Contains(stdout+stderr, "error") {
		t.Errorf("check after the purge: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := cl.run("restore", "--backup", p); code != 0 {
		t.Fatalf("restore --backup: exit %d: %s%s", code, stdout, stderr)
	}
	if !bytes.Equal(readFile(t, p), in) {
		t.Error("restore --backup did not bring the bytes back")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o400 {
		t.Errorf("mode %v after the restore, want 0400", fi.Mode().Perm())
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
