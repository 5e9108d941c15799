package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// contentEnv is a config dir of purged sessions: synth transcripts (with
// pinned content, images, a subagent each) purged by ccm purge --all so
// that a restore gives back the original bytes, then made 40 days old.
type contentEnv struct {
	cfg, store, home string
	ids              []string
	orig             map[string][]byte // transcript path -> bytes before the purge
	purged           map[string][]byte // every file under projects/ after the purge
}

func newContentEnv(t *testing.T, n int) *contentEnv { return newContentEnvTurns(t, n, 12) }

// newContentEnvTurns is newContentEnv with turns turns per transcript.
func newContentEnvTurns(t *testing.T, n, turns int) *contentEnv {
	t.Helper()
	base := filepath.Join(t.TempDir(), "my dir")
	e := &contentEnv{cfg: filepath.Join(base, "claude"), store: filepath.Join(base, "cache"), home: filepath.Join(base, "ccm home"), orig: map[string][]byte{}}
	t.Setenv("CLAUDE_CONFIG_DIR", e.cfg)
	t.Setenv("CCM_CACHE_DIR", e.store)
	t.Setenv("CCM_HOME", e.home)
	t.Setenv("CCM_COMPRESSION", "")
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i)
		e.ids = append(e.ids, id)
		proj := filepath.Join(e.cfg, "projects", fmt.Sprintf("-tmp-proj-%d", i%2))
		var buf bytes.Buffer
		o := synth.Options{Seed: int64(100 + i), Turns: turns, Images: i%2 == 0, Pins: true, SessionID: id, Cwd: fmt.Sprintf("/tmp/proj/%d", i%2)}
		if _, err := synth.Generate(&buf, o); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(proj, id+".jsonl"), buf.Bytes())
		e.orig[filepath.Join(proj, id+".jsonl")] = bytes.Clone(buf.Bytes())
		buf.Reset()
		if _, err := synth.WriteSubagent(&buf, synth.Options{Seed: int64(200 + i), Turns: 3, SessionID: id}, "a1b2c3d"); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(proj, id, "subagents", "agent-a1b2c3d.jsonl"), buf.Bytes())
	}
	age := func() {
		old := time.Now().Add(-40 * 24 * time.Hour)
		filepath.WalkDir(filepath.Join(e.cfg, "projects"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
	}
	age() // not live
	code, out, errb := runCCM("", "purge", "--all", "--keep-thinking", "--keep-progress", "--recent-turns", "0", "--threshold", "1000")
	if code != 0 || !strings.Contains(out, "purged") {
		t.Fatalf("purge: exit %d\n%s%s", code, out, errb)
	}
	age()
	e.purged = readTree(t, filepath.Join(e.cfg, "projects"))
	for p, data := range e.orig {
		if bytes.Equal(e.purged[p], data) {
			t.Fatalf("%s: the purge stubbed nothing", p)
		}
	}
	return e
}

// pins counts the store's blobs by pin level.
type pins struct {
	Items int `json:"items"`
	Soft  int `json:"pinned_soft"`
	Hard  int `json:"pinned_hard"`
}

func storeStats(t *testing.T) pins {
	t.Helper()
	code, out, errb := runCCM("", "--json", "cache", "stats")
	var p pins
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("cache stats: exit %d\n%s%s", code, out, errb)
	}
	return p
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// readTree reads every regular file under dir (none when dir is missing).
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = data
		return nil
	})
	return out
}

// sameTree fails unless dir holds exactly want, byte for byte.
func sameTree(t *testing.T, what, dir string, want map[string][]byte) {
	t.Helper()
	got := readTree(t, dir)
	for p, data := range want {
		if g, ok := got[p]; !ok || !bytes.Equal(g, data) {
			t.Errorf("%s: %s lost or changed", what, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// restoreAll runs ccm restore on every transcript of the ids and fails
// unless each gives back its bytes before the purge.
func (e *contentEnv) restoreAll(t *testing.T, ids []string) {
	t.Helper()
	for p, want := range e.orig {
		if !containsAny(p, ids) {
			continue
		}
		code, out, errb := runCCM("", "--json", "restore", p)
		if code != 0 {
			t.Errorf("restore %s: exit %d\n%s%s", filepath.Base(p), code, out, errb)
			continue
		}
		if !strings.Contains(out, `"stubs_missing": []`) {
			t.Errorf("restore %s left stubs:\n%s", filepath.Base(p), out)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Errorf("%s: restore did not give back the original bytes", filepath.Base(p))
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// The archive carries its stubs' content: with the whole store deleted,
// unarchive then restore gives back every transcript byte for byte, and
// the store content comes back with its pins.
func TestArchiveSelfContainedWithoutStore(t *testing.T) {
	e := newContentEnv(t, 3)
	code, out, errb := runCCM("", "archive", "--older-than", "20d")
	if code != 0 || !strings.Contains(out, "archived 3 of 3 sessions") {
		t.Fatalf("archive: exit %d\n%s%s", code, out, errb)
	}
	stats := storeStats(t)
	if stats.Soft+stats.Hard == 0 {
		t.Fatal("no pinned content: the pins are not tested")
	}
	if err := os.RemoveAll(e.store); err != nil {
		t.Fatal(err)
	}
	code, out, errb = runCCM("", append([]string{"unarchive"}, e.ids...)...)
	if code != 0 || strings.Count(out, "stored contents)") != 3 || strings.Contains(errb, "stay stubs") {
		t.Fatalf("unarchive: exit %d\n%s%s", code, out, errb)
	}
	sameTree(t, "after unarchive", filepath.Join(e.cfg, "projects"), e.purged)
	if got := storeStats(t); got != stats {
		t.Errorf("store after unarchive %+v, before the archive %+v", got, stats)
	}
	e.restoreAll(t, e.ids)
}

// A damaged content part: unarchive refuses with one line and changes
// nothing (neither the config dir nor the store); with
// --allow-missing-content it brings the session back and names the stubs
// that stay stubs.
func TestUnarchiveDamagedContent(t *testing.T) {
	for _, damage := range []string{"corrupt", "missing"} {
		t.Run(damage, func(t *testing.T) {
			e := newContentEnv(t, 1)
			id := e.ids[0]
			if code, out, errb := runCCM("", "archive", "--older-than", "20d"); code != 0 {
				t.Fatalf("archive: exit %d\n%s%s", code, out, errb)
			}
			path := filepath.Join(e.home, "archive", "-tmp-proj-0", id+".tar.zst")
			key := damageContent(t, path, damage)
			before := readTree(t, e.cfg)
			store := readTree(t, e.store)
			code, out, errb := runCCM("", "unarchive", id)
			if code != exitError || out != "" || strings.Count(errb, "\n") != 1 || !strings.Contains(errb, "--allow-missing-content") {
				t.Fatalf("unarchive of a damaged archive: exit %d\n%s%s", code, out, errb)
			}
			sameTree(t, "after the refusal", e.cfg, before)
			sameTree(t, "the store after the refusal", e.store, store)
			// Without the store, the damaged content is lost for good.
			os.RemoveAll(e.store)
			code, out, errb = runCCM("", "unarchive", "--allow-missing-content", id)
			if code != 0 || !strings.Contains(out, "restored "+id) || !strings.Contains(errb, "1 stubs stay stubs") || !strings.Contains(errb, key) {
				t.Fatalf("unarchive --allow-missing-content: exit %d\n%s%s", code, out, errb)
			}
			sameTree(t, "after unarchive", filepath.Join(e.cfg, "projects"), e.purged)
			main := filepath.Join(e.cfg, "projects", "-tmp-proj-0", id+".jsonl")
			code, out, _ = runCCM("", "--json", "restore", main)
			if code != 1 || strings.Count(out, `"key"`) != 1 || !strings.Contains(out, key) {
				t.Errorf("restore after a partial unarchive: exit %d, want the one stub left\n%s", code, out)
			}
		})
	}
}

// damageContent rewrites an archive with its first unpinned stored
// content's bytes altered (corrupt) or left out (missing), and returns
// that content's key.
func damageContent(t *testing.T, path, how string) string {
	t.Helper()
	key := ""
	rewriteArchive(t, path, func(h *tar.Header, data []byte) []byte {
		if key == "" && strings.HasPrefix(h.Name, "store/") && len(data) > 10 {
			key = "sha256:" + strings.TrimPrefix(h.Name, "store/")
			if how == "missing" {
				return nil
			}
			data[len(data)/2] ^= 0x20
		}
		return data
	})
	if key == "" {
		t.Fatal("the archive carries no content")
	}
	return key
}

// rewriteArchive rewrites the archive at path member by member, as a
// crafted archive would be: edit gets each member's header and bytes and
// returns the bytes to write (nil leaves the member out); the header's
// size follows.
func rewriteArchive(t *testing.T, path string, edit func(h *tar.Header, data []byte) []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(f)
	tr := tar.NewReader(dec)
	var out bytes.Buffer
	enc, _ := zstd.NewWriter(&out)
	tw := tar.NewWriter(enc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if data = edit(h, data); data == nil {
			continue
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	enc.Close()
	dec.Close()
	f.Close()
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// An archive of an older ccm (format 1) still unarchives, and unarchive
// says how many stubs stay stubs: their content is in the store or
// nowhere.
func TestUnarchiveFormat1SaysStubsLeft(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	base := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(base, "claude"))
	t.Setenv("CCM_CACHE_DIR", filepath.Join(base, "cache"))
	t.Setenv("CCM_HOME", filepath.Join(base, "home"))
	dir := filepath.Join(base, "home", "archive", "-tmp-v1")
	os.MkdirAll(dir, 0o700)
	os.MkdirAll(filepath.Join(base, "claude"), 0o700)
	for _, ext := range []string{".tar.zst", ".manifest.json"} {
		data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "sessions", "archive", "testdata", "v1", "-tmp-v1", id+ext))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, id+ext), data, 0o600)
	}
	code, out, errb := runCCM("", "unarchive", id)
	if code != 0 || !strings.Contains(out, "restored "+id+" (1 files)") ||
		!strings.Contains(errb, "28 stubs stay stubs: the archive (made by an older ccm) does not carry their content") {
		t.Fatalf("unarchive: exit %d\n%s%s", code, out, errb)
	}
}

// A session unarchive brought back stays: maintain right after does not
// archive it again, and archive counts its age from the unarchive.
func TestUnarchivedStaysForTheArchiveAge(t *testing.T) {
	e := newContentEnv(t, 1)
	id := e.ids[0]
	if code, out, errb := runCCM("", "archive", "--older-than", "20d"); code != 0 {
		t.Fatalf("archive: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb := runCCM("", "unarchive", id)
	if code != 0 || !strings.Contains(out, "leave the restored sessions here until they are left alone for 23d, counted from now") {
		t.Fatalf("unarchive: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb = runCCM("", "maintain"); code != 0 || strings.Contains(out, "archived") {
		t.Fatalf("maintain archived the session again: exit %d\n%s%s", code, out, errb)
	}
	code, out, _ = runCCM("", "archive", "-v", "--older-than", "20d")
	if code != 0 || !strings.Contains(out, "unarchived 0s ago, under 20d") {
		t.Fatalf("archive: exit %d\n%s", code, out)
	}
	sameTree(t, "after maintain", filepath.Join(e.cfg, "projects"), e.purged)
	// 21 days after the unarchive, and untouched since, it goes.
	back := filepath.Join(e.home, "unarchived.json")
	data, _ := os.ReadFile(back)
	var rec struct {
		Sessions map[string]time.Time `json:"sessions"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Sessions[id].IsZero() {
		t.Fatalf("unarchive record: %v %s", err, data)
	}
	rec.Sessions[id] = rec.Sessions[id].Add(-21 * 24 * time.Hour)
	data, _ = json.Marshal(rec)
	os.WriteFile(back, data, 0o600)
	if code, out, _ = runCCM("", "archive", "--older-than", "20d"); code != 0 || !strings.Contains(out, "archived 1 of 1 sessions") {
		t.Fatalf("archive 21 days later: exit %d\n%s", code, out)
	}
	if data, _ := os.ReadFile(back); strings.Contains(string(data), id) {
		t.Errorf("the record keeps a session archived again: %s", data)
	}
}
