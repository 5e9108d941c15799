package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// batchEnv makes a config dir under a path with spaces and non-ASCII
// characters, with one old session (transcript, subagent, purge backup)
// in project folder "-tmp-my-proj-caf-", and points ccm at it. It
// returns the config dir, the project folder and the files' contents.
func batchEnv(t *testing.T, id string) (cfg, proj string, files map[string][]byte) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "my dir", "données")
	cfg = filepath.Join(base, "claude")
	proj = filepath.Join(cfg, "projects", "-tmp-my-proj-caf-")
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	t.Setenv("CCM_HOME", filepath.Join(base, "ccm home"))
	t.Setenv("CCM_CACHE_DIR", filepath.Join(base, "cache"))
	line := `{"type":"user","cwd":"/tmp/my proj/café","sessionId":"` + id + `","message":{"role":"user","content":"fix the café bug"}}` + "\n"
	old := time.Now().Add(-40 * 24 * time.Hour)
	files = map[string][]byte{
		filepath.Join(proj, id+".jsonl"):                            []byte(strings.Repeat(line, 50)),
		filepath.Join(proj, id, "subagents", "agent-a1.jsonl"):      []byte(line),
		filepath.Join(proj, id+".jsonl.backup.20250101_000000.000"): []byte(line),
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, proj, files
}

// checkIntact fails unless every file is still there byte for byte.
func checkIntact(t *testing.T, files map[string][]byte) {
	t.Helper()
	for p, want := range files {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s lost or changed: %v", p, err)
		}
	}
}

// A session in a read-only project folder cannot lose its originals, so
// archive refuses it before writing anything and clean cannot remove its
// backup: each says so in one line on stderr, exits 1, and every file
// stays as it was; no archive is left.
func TestBatchReadOnlyProjectFolder(t *testing.T) {
	const id = "aaaaaaaa-0000-4000-8000-00000000000a"
	_, proj, files := batchEnv(t, id)
	readOnly(t, proj)

	code, out, errb := runCCM("", "archive", "--older-than", "20d")
	if code != exitFindings {
		t.Errorf("archive: exit %d, want %d", code, exitFindings)
	}
	lines := strings.Split(strings.TrimSuffix(errb, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "ccm: "+id+": ") || !strings.Contains(lines[0], "folder is not writable") {
		t.Errorf("archive stderr = %q, want one line naming the session and the unwritable folder", errb)
	}
	if !strings.Contains(out, "archived 0 of 1 sessions") || !strings.Contains(out, "1 failed") {
		t.Errorf("archive summary = %q", out)
	}
	if archives, _ := filepath.Glob(filepath.Join(os.Getenv("CCM_HOME"), "archive", "*", "*")); len(archives) != 0 {
		t.Errorf("left in the archive folder: %v", archives)
	}
	checkIntact(t, files)

	code, _, errb = runCCM("", "clean", "--backups-older-than", "7d")
	if code != exitFindings {
		t.Errorf("clean: exit %d, want %d", code, exitFindings)
	}
	lines = strings.Split(strings.TrimSuffix(errb, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "ccm: ") || !strings.Contains(lines[0], ".jsonl.backup.20250101_000000.000") {
		t.Errorf("clean stderr = %q, want one line naming the backup", errb)
	}
	checkIntact(t, files)
}

// A symlinked project folder is listed by sessions and counted by du
// under its link; archive takes the files out of the link's target and
// keeps the link, and unarchive puts them back through it.
func TestBatchSymlinkedProjectFolder(t *testing.T) {
	const id = "aaaaaaaa-0000-4000-8000-00000000000b"
	_, proj, files := batchEnv(t, id)
	target := filepath.Join(t.TempDir(), "elsewhere ü")
	if err := os.Rename(proj, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, proj); err != nil {
		t.Fatal(err)
	}

	code, out, errb := runCCM("", "sessions", "--json")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "/tmp/my proj/café") {
		t.Fatalf("sessions: exit %d, %s %s", code, out, errb)
	}
	code, out, errb = runCCM("", "du", "--json")
	if code != 0 {
		t.Fatalf("du: exit %d: %s", code, errb)
	}
	var total int64
	for _, data := range files {
		total += int64(len(data))
	}
	var du struct {
		Projects []struct {
			Folder string `json:"folder"`
			Total  int64  `json:"total"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(out), &du); err != nil {
		t.Fatalf("du --json: %v\n%s", err, out)
	}
	found := false
	for _, p := range du.Projects {
		if p.Folder == "-tmp-my-proj-caf-" {
			found = true
			if p.Total != total {
				t.Errorf("du counts %d bytes in the symlinked folder, want %d", p.Total, total)
			}
		}
	}
	if !found {
		t.Errorf("du does not list the symlinked folder: %s", out)
	}

	code, out, errb = runCCM("", "archive", "--older-than", "20d")
	if code != 0 || !strings.Contains(out, "archived 1 of 1 sessions") {
		t.Fatalf("archive: exit %d: %s %s", code, out, errb)
	}
	if fi, err := os.Lstat(proj); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, id+".jsonl")); err == nil {
		t.Fatal("the transcript is still in the link's target")
	}
	if code, out, errb = runCCM("", "unarchive", id); code != 0 {
		t.Fatalf("unarchive: exit %d: %s %s", code, out, errb)
	}
	checkIntact(t, files)
	if _, err := os.Stat(filepath.Join(target, id+".jsonl")); err != nil {
		t.Errorf("not restored inside the link's target: %v", err)
	}
}

// Many sessions at once: the workers pack while the finisher finishes
// batches; every session ends archived, its originals removed, and comes
// back byte for byte.
func TestBatchArchiveMany(t *testing.T) {
	const first = "aaaaaaaa-0000-4000-8000-00000000000c"
	cfg, _, files := batchEnv(t, first)
	old := time.Now().Add(-40 * 24 * time.Hour)
	var ids []string
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i)
		ids = append(ids, id)
		p := filepath.Join(cfg, "projects", fmt.Sprintf("-tmp-p%d", i%3), id+".jsonl")
		data := []byte(strings.Repeat(`{"type":"user","cwd":"/tmp/p","message":{"role":"user","content":"n`+id+`"}}`+"\n", 100+i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
		files[p] = data
	}
	code, out, errb := runCCM("", "archive", "--older-than", "20d", "--jobs", "4")
	if code != 0 || !strings.Contains(out, "archived 41 of 41 sessions") || errb != "" {
		t.Fatalf("archive: exit %d: %s %s", code, out, errb)
	}
	for p := range files {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there after archiving", p)
		}
	}
	if code, out, errb = runCCM("", append([]string{"unarchive"}, append(ids, first)...)...); code != 0 {
		t.Fatalf("unarchive: exit %d: %s %s", code, out, errb)
	}
	checkIntact(t, files)
}
