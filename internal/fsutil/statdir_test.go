package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"ccm/internal/testutil"
)

// StatDir gives what Lstat gives of every regular file want selects, and
// every folder, however many entries the folder has (more than one
// buffer of directory entries here); symlinks and what want refuses are
// left out.
func TestStatDirAgreesWithLstat(t *testing.T) {
	dir := testutil.TempDir(t) // Wine cannot remove a t.TempDir (testutil.TempDir)
	want := map[string]bool{}
	for i := 0; i < 1500; i++ {
		name := fmt.Sprintf("%08x-0000-4000-8000-%012x-with-a-longer-name.jsonl", i, i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", i)), 0o600); err != nil {
			t.Fatal(err)
		}
		want[name] = true
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not selected"), 0o600)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700) // a folder is listed whatever its name
	link := os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, "link.jsonl")) == nil
	got, err := StatDir(dir, func(name string) bool { return strings.HasSuffix(name, ".jsonl") })
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	files := 0
	for _, e := range got {
		if e.Dir {
			dirs = append(dirs, e.Name)
			continue
		}
		if !want[e.Name] {
			t.Fatalf("listed %q (symlink made: %v)", e.Name, link)
		}
		delete(want, e.Name)
		fi, err := os.Lstat(filepath.Join(dir, e.Name))
		if err != nil {
			t.Fatal(err)
		}
		if e.Size != fi.Size() || e.MTime != fi.ModTime().UnixNano() || e.ID != IDOf(fi) {
			t.Fatalf("%s: StatDir %d bytes, mtime %d, id %v; Lstat %d, %d, %v", e.Name, e.Size, e.MTime, e.ID, fi.Size(), fi.ModTime().UnixNano(), IDOf(fi))
		}
		files++
	}
	sort.Strings(dirs)
	if len(want) > 0 || files != 1500 || strings.Join(dirs, ",") != "sub,sub.jsonl" {
		t.Fatalf("%d files missing, %d listed, folders %v", len(want), files, dirs)
	}
	if all, _ := StatDir(dir, nil); len(all) != 1500+1+2 {
		t.Fatalf("without a filter: %d entries, want every file and folder but the symlink", len(all))
	}
	if _, err := StatDir(filepath.Join(dir, "missing"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing folder: %v", err)
	}
	if _, err := StatDir(filepath.Join(dir, "notes.txt"), nil); err == nil {
		t.Fatal("a file listed as a folder")
	}
}
