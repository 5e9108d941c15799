package main

import (
	"os"
	"path/filepath"
	"testing"

	"ccm/ccm"
	"ccm/prune"
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
