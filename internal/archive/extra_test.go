package archive

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestExtraMembers: members that are not files of the session (the
// stored content of its stubs) are asked for with the keys the files
// mention, listed in the manifest and verified like files, and neither
// removed by Finish nor written into the config dir by Extract.
func TestExtraMembers(t *testing.T) {
	f := newFixture(t)
	root := t.TempDir()
	content := "the content of the stub\n"
	var asked []string
	o := Options{Root: root, Level: zstd.SpeedFastest, Now: time.Now(), Extra: func(refs []string) ([]Member, error) {
		asked = refs
		return []Member{{Path: ExtraDir + "/sha256/" + strings.Repeat("ab", 32), Size: int64(len(content)), MTime: time.Now(),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(content)), nil }}}, nil
	}}
	res, err := Create(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("Extra was asked for %v, want the one key the transcript mentions", asked)
	}
	m, err := Verify(res.Archive)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range m.Files {
		if IsExtra(e.Path) {
			found = e.Size == int64(len(content))
		}
	}
	if !found {
		t.Fatalf("the extra member is not in the manifest: %+v", m.Files)
	}
	if _, err := Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.cfg, ExtraDir)); !os.IsNotExist(err) {
		t.Errorf("Extract wrote the extra member into the config dir: %v", err)
	}
	for rel, data := range f.files {
		got, err := os.ReadFile(filepath.Join(f.cfg, filepath.FromSlash(rel)))
		if err != nil || string(got) != string(data) {
			t.Errorf("%s not restored: %v", rel, err)
		}
	}

	// A member shorter than announced fails the pack: no archive, the
	// originals untouched.
	o.Extra = func([]string) ([]Member, error) {
		return []Member{{Path: ExtraDir + "/x", Size: 100, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("short")), nil }}}, nil
	}
	if _, err := Create(context.Background(), f.source(t), o); err == nil || !strings.Contains(err.Error(), "announced") {
		t.Errorf("short member: %v", err)
	}
	if list, _ := List(root); len(list) != 0 {
		t.Errorf("a failed pack left %v", list)
	}
	if _, err := os.Stat(filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")); err != nil {
		t.Errorf("the original is gone after a failed pack: %v", err)
	}
}
