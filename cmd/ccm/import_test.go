package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/internal/testutil"
	"ccm/prune"
	"ccm/transcript"
)

// A session moved with export and import keeps every stub's content in
// the new store, and the new store's reference index knows the imported
// transcript at once (as after an unarchive), so a prune there keeps what
// its stubs stand for without a rescan.
func TestImportNotesReferences(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a")
	tr, id := generatedSession(t, a, 11, 300_000)
	ccmOK(t, "purge", "--all")
	purged, _ := os.ReadFile(tr)
	refs := prune.KeyCollector{}
	refs.Write(purged)
	if len(refs.Refs) == 0 {
		t.Fatal("the purge left no stub")
	}
	bundle := filepath.Join(t.TempDir(), "s.tar.zst")
	ccmOK(t, "export", "--session", id, "-o", bundle)

	bcfg := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(filepath.Join(bcfg, "projects"), 0o700)
	t.Setenv("CLAUDE_CONFIG_DIR", bcfg)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ccmOK(t, "import", bundle, "--cwd", root)
	store := ccm.DefaultRoot(bcfg)
	st, err := ccm.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	x, err := prune.ReadIndex(store)
	if err != nil {
		t.Fatal(err)
	}
	indexed := x.Refs()
	for k := range refs.Refs {
		if _, ok := indexed[k]; !ok {
			t.Errorf("%s: the imported transcript's reference is not in the index", k)
		}
		if _, err := st.Stat(k); err != nil {
			t.Errorf("%s: not in the new store: %v", k, err)
		}
	}
}

// TestExportImportCorpus: a real session with subagents (the corpus's
// spotter session, purged so that it holds stubs) exported from one
// config dir and imported into another, at another path under a new id.
// Once its stubs are restored there, each of its files is the file
// restored in the first config dir with every record's cwd under the new
// path and its sessionId the new id, nothing else changed; check finds no
// error. The bundle left the first session where it was.
func TestExportImportCorpus(t *testing.T) {
	a := testutil.CopyCorpus(t)
	old := time.Now().Add(-48 * time.Hour)
	filepath.WalkDir(filepath.Join(a, "projects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	t.Setenv("CLAUDE_CONFIG_DIR", a)
	t.Setenv("CCM_CACHE_DIR", "")
	t.Setenv("CCM_HOME", "")
	const id, oldRoot = "4d5611e5-241a-462a-8d15-5122611a9569", "/home/USER/projects/spotter-worktrees/spotter-dov"
	ccmOK(t, "purge", "--all")
	if countStubs(t, filepath.Join(a, "projects", transcript.EncodeProjectDir(oldRoot))) == 0 {
		t.Fatal("the purge left no stub in the session")
	}
	bundle := filepath.Join(t.TempDir(), "s.tar.zst")
	ccmOK(t, "export", "--session", id[:8], "-o", bundle)
	ccmOK(t, "restore", "--all")

	b := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(filepath.Join(b, "projects"), 0o700)
	t.Setenv("CLAUDE_CONFIG_DIR", b)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	var plan struct {
		Sessions []struct {
			NewID string `json:"new_id"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(ccmOK(t, "--json", "import", bundle, "--cwd", root, "--new-id")), &plan); err != nil || len(plan.Sessions) != 1 {
		t.Fatalf("import: %+v, %v", plan, err)
	}
	nid := plan.Sessions[0].NewID
	// Named: just written by the import, it is live for a while, and a
	// restore --all skips a live session it finds.
	if out := ccmOK(t, "restore", "--session", nid); !strings.Contains(out, "restored ") {
		t.Errorf("restore in B: %s", out)
	}
	if code, out, errs := runCCM("", "check", "--all"); code != 0 || !strings.Contains(out, " 0 errors") {
		t.Errorf("check in B: exit %d\n%s%s", code, out, errs)
	}
	moved := strings.NewReplacer(`"cwd":"`+oldRoot, `"cwd":"`+root, `"sessionId":"`+id+`"`, `"sessionId":"`+nid+`"`)
	newDir := filepath.Join(b, "projects", transcript.EncodeProjectDir(root))
	for _, c := range []struct{ rel, to string }{
		{testutil.Spotter, filepath.Join(newDir, nid+".jsonl")},
		{testutil.SpotterAgent, filepath.Join(newDir, nid, "subagents", "agent-a2898e3.jsonl")},
		{testutil.Acompact, filepath.Join(newDir, nid, "subagents", "agent-acompact-e1f845.jsonl")},
	} {
		inA, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(c.rel)))
		if err != nil {
			t.Fatal(err)
		}
		inB, err := os.ReadFile(c.to)
		if err != nil {
			t.Fatalf("not imported: %v", err)
		}
		if want := moved.Replace(string(inA)); string(inB) != want {
			t.Errorf("%s: imported and restored, %d bytes, differs from A's moved (%d bytes)", c.to, len(inB), len(want))
		}
		if !bytes.Contains(inB, []byte(`"cwd":"`+root+`"`)) || bytes.Contains(inB, []byte(`"cwd":"`+oldRoot)) {
			t.Errorf("%s: records' cwd not moved to %s", c.to, root)
		}
	}
}
