package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/internal/testutil"
	"ccm/sessions/archive"
)

// killWorld is a config dir of purged sessions, its store and ccm home
// under one folder, copied afresh for every kill.
type killWorld struct {
	base  string
	ids   []string
	files map[string][]byte // every file under projects/, relative to base
	keys  []ccm.Key         // the store's content
}

// newKillWorld makes n purged sessions of turns turns each.
func newKillWorld(t *testing.T, n, turns int) *killWorld {
	t.Helper()
	e := newContentEnvTurns(t, n, turns)
	base := filepath.Dir(e.cfg)
	w := &killWorld{base: base, ids: e.ids, files: map[string][]byte{}}
	for p, data := range e.purged {
		rel, _ := filepath.Rel(base, p)
		w.files[rel] = data
	}
	st, err := ccm.Open(e.store)
	if err != nil {
		t.Fatal(err)
	}
	lst, err := st.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range lst.Entries {
		w.keys = append(w.keys, en.Key)
	}
	return w
}

// trial copies the world to dir and returns the environment of a ccm
// working on the copy.
func (w *killWorld) trial(t *testing.T, dir string) []string {
	t.Helper()
	testutil.CopyTree(t, w.base, dir)
	return append(os.Environ(), "CLAUDE_CONFIG_DIR="+filepath.Join(dir, "claude"), "CCM_CACHE_DIR="+filepath.Join(dir, "cache"),
		"CCM_HOME="+filepath.Join(dir, "ccm home"), "CCM_COMPRESSION=")
}

// ccmBinary is the test binary under the name ccm, which runs ccm.
func ccmBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ccm")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// session lists the files of session id (relative to the copy).
func (w *killWorld) session(id string) map[string][]byte {
	out := map[string][]byte{}
	for rel, data := range w.files {
		if strings.Contains(rel, id) {
			out[rel] = data
		}
	}
	return out
}

// archivePath is where session id's archive is in the copy at dir.
func archivePath(dir, rel, id string) string {
	folder := strings.Split(filepath.ToSlash(rel), "/")[2]
	return filepath.Join(dir, "ccm home", "archive", folder, id+".tar.zst")
}

// nothingLost fails unless every file of every session is either in place
// byte for byte or in a verified archive of its session, and every stored
// content is in the store or in such an archive. It returns how many
// sessions were half-way (files in place and an archive, or a marker).
func (w *killWorld) nothingLost(t *testing.T, dir string) (halfway int) {
	t.Helper()
	carried := map[ccm.Key]bool{}
	for _, id := range w.ids {
		var m *archive.Manifest
		in, out := 0, 0
		for rel, want := range w.session(id) {
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if err == nil {
				if !bytes.Equal(got, want) {
					t.Errorf("%s: in place but changed", rel)
				}
				in++
				continue
			}
			if m == nil {
				if m, err = archive.Verify(archivePath(dir, rel, id)); err != nil {
					t.Errorf("%s: not in place, and its session's archive does not hold it: %v", rel, err)
					return halfway
				}
				for _, c := range m.Content {
					carried[ccm.Key(c.Key)] = true
				}
			}
			if !listsFile(m, rel, want) {
				t.Errorf("%s: not in place, and not in its session's archive", rel)
			}
			out++
		}
		rel := ""
		for r := range w.session(id) {
			rel = r
		}
		_, aerr := os.Stat(archivePath(dir, rel, id))
		if in > 0 && (out > 0 || aerr == nil) {
			halfway++
		}
	}
	st, err := ccm.Open(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range w.keys {
		if err := st.Verify(k); err != nil && !carried[k] {
			t.Errorf("content %s: neither in the store nor in an archive: %v", k, err)
		}
	}
	return halfway
}

func listsFile(m *archive.Manifest, rel string, want []byte) bool {
	for _, e := range m.Files {
		if strings.HasSuffix(filepath.ToSlash(rel), e.Path) && e.Size == int64(len(want)) {
			return e.SHA256 == sha256Hex(want)
		}
	}
	return false
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// leftovers lists markers and temp files in the copy's config dir and
// ccm home. (The store's own temp files, which a kill while it writes
// leaves too, are the store's: prune --gc-unreferenced removes them.)
func leftovers(dir string) []string {
	var out []string
	for _, sub := range []string{"claude", "ccm home"} {
		filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.Contains(d.Name(), ".ccm-tmp-") || strings.HasSuffix(d.Name(), ".pending")) {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// archived fails unless every session is archived (and verifies) and
// none of its files is in place.
func (w *killWorld) archived(t *testing.T, dir string) {
	t.Helper()
	for rel := range w.files {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s still in place", rel)
		}
	}
	for _, id := range w.ids {
		for rel := range w.session(id) {
			if _, err := archive.Verify(archivePath(dir, rel, id)); err != nil {
				t.Errorf("%s: %v", id, err)
			}
			break
		}
	}
	if l := leftovers(dir); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// restored fails unless every session is in place byte for byte, no
// archive of it is left, and the store holds all its content.
func (w *killWorld) restored(t *testing.T, dir string) {
	t.Helper()
	for rel, want := range w.files {
		if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not restored byte for byte: %v", rel, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "ccm home", "archive", "*", "*")); len(left) > 0 {
		t.Errorf("archives left: %v", left)
	}
	st, _ := ccm.Open(filepath.Join(dir, "cache"))
	for _, k := range w.keys {
		if err := st.Verify(k); err != nil {
			t.Errorf("content %s not back in the store: %v", k, err)
		}
	}
	if l := leftovers(dir); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// runCmd runs the binary to its end and returns its exit code and output.
func runCmd(bin string, env []string, args ...string) (int, string) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, string(out)
}

var (
	archiveSteps   = []string{"archive-packed", "archive-linked", "archive-published", "archive-synced", "archive-removing", "archive-removed"}
	unarchiveSteps = []string{"unarchive-staging", "unarchive-staged", "unarchive-committed", "unarchive-renaming", "unarchive-restored", "unarchive-removed"}
)

// A kill at each step of archive and of unarchive loses nothing, and the
// next run of the same command finishes the job: every session archived
// (or restored), no marker or temp file left, never "already exists".
func TestArchiveKilledAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	bin := ccmBinary(t)
	w := newKillWorld(t, 3, 8)
	archivedWorld := w.archivedCopy(t, bin)
	for _, step := range archiveSteps {
		t.Run(step, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			env := w.trial(t, dir)
			code, out := runCmd(bin, append(env, "CCM_TEST_ARCHIVE_KILL="+step), "archive", "--older-than", "20d")
			if code != -1 {
				t.Fatalf("archive not killed at %s: exit %d\n%s", step, code, out)
			}
			w.nothingLost(t, dir)
			if code, out := runCmd(bin, env, "archive", "--older-than", "20d"); code != 0 || !strings.Contains(out, "recovered") {
				t.Fatalf("archive after a kill at %s: exit %d\n%s", step, code, out)
			}
			w.archived(t, dir)
			if code, out := runCmd(bin, env, append([]string{"unarchive"}, w.ids...)...); code != 0 {
				t.Fatalf("unarchive: exit %d\n%s", code, out)
			}
			w.restored(t, dir)
		})
	}
	for _, step := range unarchiveSteps {
		t.Run(step, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			env := archivedWorld.trial(t, dir)
			os.RemoveAll(filepath.Join(dir, "cache")) // the content comes from the archives
			args := append([]string{"unarchive"}, w.ids...)
			code, out := runCmd(bin, append(env, "CCM_TEST_ARCHIVE_KILL="+step), args...)
			if code != -1 {
				t.Fatalf("unarchive not killed at %s: exit %d\n%s", step, code, out)
			}
			w.nothingLost(t, dir)
			if code, out := runCmd(bin, env, args...); code != 0 || !strings.Contains(out, "recovered") {
				t.Fatalf("unarchive after a kill at %s: exit %d\n%s", step, code, out)
			}
			w.restored(t, dir)
		})
	}
}

// archivedCopy is a world whose sessions are all archived.
func (w *killWorld) archivedCopy(t *testing.T, bin string) *killWorld {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "archived")
	env := w.trial(t, dir)
	if code, out := runCmd(bin, env, "archive", "--older-than", "20d"); code != 0 {
		t.Fatalf("archive: exit %d\n%s", code, out)
	}
	return &killWorld{base: dir, ids: w.ids, files: w.files, keys: w.keys}
}

// The random kills: CCM_KILL_TRIALS=N runs N kill -9s of archive and N of
// unarchive at random moments (scripts/trials-archive.sh runs them at
// scale), each followed by the checks of TestArchiveKilledAtEachStep.
func TestArchiveKilledAtRandom(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CCM_KILL_TRIALS"))
	if n == 0 || testing.Short() {
		t.Skip("set CCM_KILL_TRIALS=N to run N random kills of archive and of unarchive (scripts/trials-archive.sh)")
	}
	bin := ccmBinary(t)
	w := newKillWorld(t, 6, 40)
	archivedWorld := w.archivedCopy(t, bin)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for _, c := range []struct {
		name  string
		world *killWorld
		args  []string
		after func(t *testing.T, dir string)
	}{
		{"archive", w, []string{"archive", "--older-than", "20d"}, w.archived},
		{"unarchive", archivedWorld, append([]string{"unarchive"}, w.ids...), w.restored},
	} {
		// How long an undisturbed run takes: kills fall anywhere in it.
		dir := filepath.Join(t.TempDir(), "timing")
		env := c.world.trial(t, dir)
		start := time.Now()
		if code, out := runCmd(bin, env, c.args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.name, code, out)
		}
		span := time.Since(start)
		var killed, finished, halfway, failed int
		for i := 0; i < n; i++ {
			dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
			env := c.world.trial(t, dir)
			if c.name == "unarchive" {
				os.RemoveAll(filepath.Join(dir, "cache"))
			}
			cmd := exec.Command(bin, c.args...)
			cmd.Env = env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.Int63n(int64(span) * 6 / 5)))
			cmd.Process.Kill()
			if err := cmd.Wait(); err != nil {
				killed++
			} else {
				finished++
			}
			before := t.Failed()
			ok := t.Run(fmt.Sprintf("%s-%d", c.name, i), func(t *testing.T) {
				if w.nothingLost(t, dir) > 0 || len(leftovers(dir)) > 0 {
					halfway++
				}
				if code, out := runCmd(bin, env, c.args...); code != 0 {
					t.Fatalf("%s after the kill: exit %d\n%s", c.name, code, out)
				}
				c.after(t, dir)
			})
			if !ok && !before {
				failed++
			}
			os.RemoveAll(dir)
		}
		t.Logf("trials: %s: %d kill -9s over %v runs: %d killed (%d left half-way work), %d finished first; %d lost data or stuck",
			c.name, n, span.Round(time.Millisecond), killed, halfway, finished, failed)
	}
}
