//go:build unix

package rewrite

// These tests keep a descriptor of the transcript open across the rename
// (from another process, as a program that keeps one does, or from the
// test itself, for a line torn across the rename) and expect Unix's
// answer: the writer is named, or its bytes are carried over. On Windows
// such a writer either allows deletion (and is then replaced like any
// reader) or makes the replace refuse (fsutil's tests cover both), and
// the system cannot name it, so they run on Unix only.

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"ccm/internal/fsutil"
)

// A writer that keeps the file open is seen before the rename: the file
// is left as it was, with everything the writer wrote, and nothing the
// rewrite made stays behind, whatever the backup.
func TestHolderBeforeRenameRefused(t *testing.T) {
	seesWriters(t)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			path := file(t, 40, 0)
			cmd := startHolder(t, path, 3000)
			_, err := replace(t, path, mode)
			var held *HeldOpenError
			if !errors.As(err, &held) || !slices.Contains(held.Pids, cmd.Process.Pid) {
				t.Fatalf("err %v, want held open by %d", err, cmd.Process.Pid)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			want := string(original(40)) + heldLines(0, 3000)
			if got := readFile(t, path); got != want {
				t.Errorf("transcript changed: %d bytes, want %d", len(got), len(want))
			}
			if names := dirNames(t, path); len(names) != 1 {
				t.Errorf("left beside the transcript: %v", names)
			}
		})
	}
}

// A writer that opens the file in the instant before the rename and keeps
// it open: its lines reach the transcript while the rewrite waits for it,
// and after the wait the old file keeps a name, which the result gives;
// every line it wrote is there, for every backup kind. Where the system
// cannot see it, its writing past the wait gives it away the same way.
func TestHolderAfterRenameKept(t *testing.T) {
	detections(t, func(t *testing.T) {
		for _, mode := range modes {
			t.Run(string(mode), func(t *testing.T) {
				t.Parallel()
				path := file(t, 40, time.Hour)
				const lines = 3000 // at least 3 s: past HeldWait
				var cmd *exec.Cmd
				defer SetHooks(path, Hooks{BeforeRename: func(n int) {
					if n == 0 {
						cmd = startHolder(t, path, lines)
					}
				}})()
				res, err := replace(t, path, mode)
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					t.Fatal(err)
				}
				// Where the system cannot tell, the file the late lines
				// were put in place in is kept too: it was live.
				if len(res.Kept) != 1 && !(fsutil.PortableDetect() && len(res.Kept) == 2) {
					t.Fatalf("kept %v, want the old file", res.Kept)
				}
				if !fsutil.PortableDetect() && !slices.Equal(res.HeldOpen, []int{cmd.Process.Pid}) {
					t.Errorf("held open by %v, want [%d]", res.HeldOpen, cmd.Process.Pid)
				}
				// The old file got every line; the transcript a prefix of
				// them, after the rewritten lines.
				if got, want := readFile(t, res.Kept[0]), string(original(40))+heldLines(0, lines); got != want {
					t.Errorf("kept file: %d bytes, want %d", len(got), len(want))
				}
				got := readFile(t, path)
				carried, ok := strings.CutPrefix(got, string(rewritten(40)))
				if !ok || carried != heldLines(0, strings.Count(carried, "\n")) {
					t.Errorf("the transcript's held lines are not the first ones in order: %q", tail(got))
				}
				if mode == BackupLink && res.Kept[0] != res.Backup {
					t.Errorf("kept %s, want the backup %s", res.Kept[0], res.Backup)
				}
				if mode != BackupLink && !strings.HasSuffix(res.Kept[0], HeldTag) {
					t.Errorf("kept %s, want a %s link", res.Kept[0], HeldTag)
				}
			})
		}
	})
}

// A line torn across the rename: its first half was there when the
// rewrite began (copied verbatim after the rewritten lines), its second
// half lands on the old file after the rename, and the next line on the
// new file. The line comes out whole, before the next one.
func TestTornLineAcrossRename(t *testing.T) {
	detections(t, func(t *testing.T) {
		path := file(t, 30, time.Hour)
		w := openAppend(t, path)
		defer w.Close()
		write(t, w, `{"type":"torn","text":"first half, `)
		defer SetHooks(path, Hooks{AfterRename: func(n int) {
			if n == 0 {
				write(t, w, "second half\"}\n")
				appendLine(t, path, "next\n")
			}
		}})()
		if _, err := replace(t, path, BackupLink); err != nil {
			t.Fatal(err)
		}
		want := string(rewritten(30)) + `{"type":"torn","text":"first half, second half"}` + "\nnext\n"
		if got := readFile(t, path); got != want {
			t.Fatalf("transcript ends %q, want %q", tail(got), tail(want))
		}
	})
}
