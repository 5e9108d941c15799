package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
)

// A copy packed with a part (an export's): the originals stay, the part is
// declared and verified, unarchive skips it, and Read hands it over with
// every file while the content goes into another store, b2s keys too.
func TestPackedCopyReadElsewhere(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st, _ := ccm.Open(filepath.Join(t.TempDir(), "store"))
	k, err := st.Put(ctx, []byte(`"output of make"`), ccm.Source{Type: "json"}, ccm.PinSoft, "kept")
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	never := ccm.KeyOf([]byte("never stored"))
	os.WriteFile(main, []byte(stubLine(f.id, k)+stubLine(f.id, never)), 0o600)
	o := f.opts(t)
	o.Store, o.KeepOriginals = st, true
	o.Parts = []PartData{{Kind: "bundle", Name: "bundle.json", Data: []byte(`{"format":"ccm-bundle/1"}`)}}
	p, err := Pack(ctx, f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(main); err != nil {
		t.Fatalf("a packed copy removed the original: %v", err)
	}
	m, err := PeekManifest(p.Archive)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 1 || m.Parts[0].Path != "parts/bundle/bundle.json" || len(m.Content) != 1 {
		t.Fatalf("manifest parts %+v, content %+v", m.Parts, m.Content)
	}
	// The manifest inside is found without the sidecar too.
	os.Rename(SidecarPath(p.Archive), SidecarPath(p.Archive)+".aside")
	if m2, err := PeekManifest(p.Archive); err != nil || m2.ArchiveSHA256 != "" || len(m2.Files) != len(m.Files) {
		t.Fatalf("inner manifest: %v", err)
	}
	os.Rename(SidecarPath(p.Archive)+".aside", SidecarPath(p.Archive))

	st2, _ := ccm.Open(filepath.Join(t.TempDir(), "store2"))
	files := map[string][]byte{}
	var part []byte
	ro := ReadOptions{Store: st2, DryRun: true,
		File: func(e Entry, r io.Reader) error { b, err := io.ReadAll(r); files[e.Path] = b; return err },
		Part: func(pt Part, r io.Reader) error { b, err := io.ReadAll(r); part = b; return err }}
	res, err := Read(ctx, p.Archive, m, ro)
	if err != nil {
		t.Fatal(err)
	}
	if res.Carried != 1 || res.New != 1 || !equal(res.StaysStub, []string{string(never)}) {
		t.Errorf("dry read: %+v", res)
	}
	if _, err := st2.Stat(k); err == nil {
		t.Error("a dry read stored content")
	}
	ro.DryRun = false
	if res, err = Read(ctx, p.Archive, m, ro); err != nil {
		t.Fatal(err)
	}
	if !equal(res.StaysStub, []string{string(never)}) {
		t.Errorf("stays stub %v", res.StaysStub)
	}
	if got, err := st2.Get(ctx, k); err != nil || string(got) != `"output of make"` {
		t.Errorf("content not in the other store: %v", err)
	}
	if meta, _ := st2.Stat(k); meta == nil || meta.Pinned.Level != ccm.PinSoft {
		t.Errorf("pin not carried: %+v", meta)
	}
	if string(part) != `{"format":"ccm-bundle/1"}` {
		t.Errorf("part %q", part)
	}
	for rel, data := range f.files {
		if strings.HasSuffix(rel, "other.jsonl") || strings.HasSuffix(rel, f.id+".jsonl") {
			continue
		}
		if !bytes.Equal(files[rel], data) {
			t.Errorf("%s not handed over as it is", rel)
		}
	}

	// Unarchive of the same archive elsewhere: the part is never written.
	cfg2 := t.TempDir()
	os.MkdirAll(filepath.Join(cfg2, "projects"), 0o700)
	if _, err := Extract(ctx, p.Archive, cfg2, ExtractOptions{Now: time.Now(), Store: st2}); err != nil {
		t.Fatal(err)
	}
	for path := range tree(t, cfg2) {
		if strings.Contains(path, "parts") || strings.Contains(path, "bundle.json") {
			t.Errorf("the part was written: %s", path)
		}
	}
}

// CheckPlace allows only the session's own paths, and no symlink below
// its root.
func TestCheckPlace(t *testing.T) {
	cfg := t.TempDir()
	id, folder := craftID, craftFolder
	if _, err := CheckPlace(cfg, folder, id, "projects/"+folder+"/"+id+".jsonl", false); err != nil {
		t.Errorf("the transcript: %v", err)
	}
	for _, rel := range []string{"settings.json", "projects/" + folder + "/" + otherID + ".jsonl", "projects/" + folder + "/../x.jsonl", "todos/" + otherID + "-agent-x.json"} {
		if _, err := CheckPlace(cfg, folder, id, rel, false); !errors.Is(err, ErrForeign) {
			t.Errorf("%s: %v", rel, err)
		}
	}
	if _, err := CheckPlace(cfg, "..", id, "projects/../"+id+".jsonl", false); !errors.Is(err, ErrForeign) {
		t.Errorf("folder ..: %v", err)
	}
	out := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "projects", folder), 0o700)
	os.Symlink(out, filepath.Join(cfg, "projects", folder, id))
	if _, err := CheckPlace(cfg, folder, id, "projects/"+folder+"/"+id+"/subagents/agent-a.jsonl", false); !errors.Is(err, ErrForeign) {
		t.Errorf("through a symlink: %v", err)
	}
	os.MkdirAll(filepath.Join(cfg, "file-history", id, "f@v1"), 0o700)
	if _, err := CheckPlace(cfg, folder, id, "file-history/"+id+"/f@v1", false); !errors.Is(err, ErrForeign) {
		t.Errorf("a folder where a file goes: %v", err)
	}
}
