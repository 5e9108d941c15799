package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/testutil"
	"ccm/sessions"
)

// fixture writes a config dir with one session: a transcript whose name
// has spaces and non-ASCII characters in its project, a subagent, a tool
// result, a backup, file-history and a todo, all with old mtimes.
type fixture struct {
	cfg, folder, id string
	files           map[string][]byte // rel path -> content
	mtimes          map[string]time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	cfg := t.TempDir()
	f := &fixture{cfg: cfg, folder: "-tmp-my-proj-caf-", id: "0b6c1c2e-1111-2222-3333-444455556666",
		files: map[string][]byte{}, mtimes: map[string]time.Time{}}
	line := `{"type":"user","cwd":"/tmp/my proj/café","sessionId":"0b6c1c2e-1111-2222-3333-444455556666","message":{"role":"user","content":"héllo [CCM_CACHED] key: sha256:` + strings.Repeat("ab", 32) + `"}}` + "\n"
	old := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	add := func(rel string, data []byte, mode os.FileMode, i int) {
		p := filepath.Join(cfg, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		mt := old.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		f.files[rel], f.mtimes[rel] = data, mt
	}
	proj := "projects/" + f.folder + "/"
	add(proj+f.id+".jsonl", []byte(strings.Repeat(line, 200)+`{"type":"assistant","torn`), 0o600, 0)
	add(proj+f.id+"/subagents/agent-a1.jsonl", []byte(line), 0o600, 1)
	add(proj+f.id+"/tool-results/toolu_1.txt", bytes.Repeat([]byte{0, 1, 2, 255}, 5000), 0o640, 2)
	add(proj+f.id+".jsonl.backup.20260101_000000.000", []byte(line+line), 0o600, 3)
	add("file-history/"+f.id+"/abc@v1", []byte("old file\n"), 0o600, 4)
	add("todos/"+f.id+"-agent-"+f.id+".json", []byte("[]"), 0o600, 5)
	// A neighbour that must not move.
	add(proj+"other.jsonl", []byte(line), 0o600, 6)
	return f
}

func (f *fixture) source(t *testing.T) Source {
	t.Helper()
	fo, err := sessions.ScanFolder(sessions.Project{Folder: f.folder, Dir: filepath.Join(f.cfg, "projects", f.folder)})
	if err != nil {
		t.Fatal(err)
	}
	var s *sessions.Session
	for _, x := range fo.Sessions {
		if x.ID == f.id {
			s = x
		}
	}
	if s == nil {
		t.Fatal("session not found by ScanFolder")
	}
	rel, dirs, errs := sessions.Related(f.cfg, f.id)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return Source{ConfigDir: f.cfg, Session: s, Related: rel, RelDirs: dirs, Project: "/tmp/my proj/café"}
}

func (f *fixture) opts(t *testing.T) Options {
	return Options{Root: filepath.Join(t.TempDir(), "arch ive"), Level: zstd.SpeedDefault, Now: time.Now()}
}

func TestRoundTripByteExactWithMtimes(t *testing.T) {
	f := newFixture(t)
	o := f.opts(t)
	res, err := Create(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 6 {
		t.Errorf("archived %d files, want 6", res.Files)
	}
	for rel := range f.files {
		_, err := os.Lstat(filepath.Join(f.cfg, rel))
		if strings.HasSuffix(rel, "other.jsonl") {
			if err != nil {
				t.Errorf("neighbour %s was removed", rel)
			}
		} else if err == nil {
			t.Errorf("%s still there after archiving", rel)
		}
	}
	if _, err := os.Stat(filepath.Join(f.cfg, "projects", f.folder, f.id)); err == nil {
		t.Error("companion folder still there")
	}
	side, err := ReadSidecar(SidecarPath(res.Archive))
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Refs) != 1 || side.Refs[0] != "sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("refs = %v", side.Refs)
	}
	if _, err := Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range f.files {
		p := filepath.Join(f.cfg, rel)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not restored byte for byte (%v)", rel, err)
			continue
		}
		fi, _ := os.Stat(p)
		if !fi.ModTime().Equal(f.mtimes[rel]) {
			t.Errorf("%s: mtime %v, want %v", rel, fi.ModTime(), f.mtimes[rel])
		}
	}
	fi, _ := os.Stat(filepath.Join(f.cfg, "projects", f.folder, f.id, "tool-results", "toolu_1.txt"))
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if _, err := os.Stat(res.Archive); err == nil {
		t.Error("archive still there after unarchive")
	}
}

func TestCorruptArchiveRefused(t *testing.T) {
	for _, damage := range []string{"truncate", "flip"} {
		t.Run(damage, func(t *testing.T) {
			f := newFixture(t)
			res, err := Create(context.Background(), f.source(t), f.opts(t))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(res.Archive)
			if damage == "truncate" {
				data = data[:len(data)/2]
			} else {
				data[len(data)/2] ^= 0x40
			}
			os.WriteFile(res.Archive, data, 0o600)
			_, err = Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{Now: time.Now()})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if got, _ := os.ReadFile(res.Archive); !bytes.Equal(got, data) {
				t.Error("the archive was changed or removed")
			}
			if _, err := os.Stat(filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")); err == nil {
				t.Error("a file was restored from a corrupt archive")
			}
		})
	}
}

func TestExistingTargetRefusedWithoutForce(t *testing.T) {
	f := newFixture(t)
	res, err := Create(context.Background(), f.source(t), f.opts(t))
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	os.WriteFile(main, []byte("new session\n"), 0o600)
	_, err = Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{Now: time.Now()})
	if !errors.Is(err, ErrTargetExists) {
		t.Fatalf("err = %v, want ErrTargetExists", err)
	}
	if got, _ := os.ReadFile(main); string(got) != "new session\n" {
		t.Fatal("existing file overwritten")
	}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if _, err := Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{Force: true, Now: now}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(main + ".backup.20260506_070809.000"); string(got) != "new session\n" {
		t.Error("--force did not keep the existing file as a backup")
	}
	if got, _ := os.ReadFile(main); !bytes.Equal(got, f.files["projects/"+f.folder+"/"+f.id+".jsonl"]) {
		t.Error("archived transcript not restored")
	}
}

func TestWrittenDuringArchivingLeftInPlace(t *testing.T) {
	f := newFixture(t)
	src := f.source(t)
	o := f.opts(t)
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	p, err := Pack(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	// Claude Code appends a line after the archive was verified.
	fh, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"type":"user"}` + "\n")
	fh.Close()
	err = Finish([]*Packed{p}, nil)[0]
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
	if _, err := os.Stat(ArchivePath(o.Root, f.folder, f.id)); err == nil {
		t.Error("archive kept although the session stays")
	}
	for rel := range f.files {
		if _, err := os.Stat(filepath.Join(f.cfg, rel)); err != nil {
			t.Errorf("%s removed: %v", rel, err)
		}
	}
}

func TestFullDiskLeavesNoPartialArchive(t *testing.T) {
	f := newFixture(t)
	o := f.opts(t)
	dir := filepath.Join(o.Root, f.folder)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// Root ignores folder permissions: a small tmpfs, filled, is a
		// real full disk (the folder exists; its temp file cannot grow).
		unmount, err := testutil.MountTmpfs(o.Root, 256<<10)
		if err != nil {
			t.Skipf("root ignores folder permissions, and no full disk can be made here: %v", err)
		}
		defer unmount()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		fillDisk(t, filepath.Join(o.Root, "filler"))
	} else {
		// A folder that cannot be written to stands in for a full disk:
		// the temp file cannot be created or grown.
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
	}
	_, err := Create(context.Background(), f.source(t), o)
	if err == nil {
		t.Fatal("archiving onto a full disk succeeded")
	}
	t.Logf("refused: %v", err)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	for rel := range f.files {
		if _, err := os.Stat(filepath.Join(f.cfg, rel)); err != nil {
			t.Errorf("%s removed: %v", rel, err)
		}
	}
}

// fillDisk writes path until the disk is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := fh.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// A transcript another process holds open for writing stays where it is,
// also when its project folder is a symlink to elsewhere (the kernel names
// the open file by its target): Finish reads /proc once for the batch and
// must look under the target too.
func TestOpenForWritingInSymlinkedFolderLeftInPlace(t *testing.T) {
	f := newFixture(t)
	// Move the project folder elsewhere and link it back.
	real := filepath.Join(t.TempDir(), "elsewhere")
	link := filepath.Join(f.cfg, "projects", f.folder)
	if err := os.Rename(link, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	src := f.source(t)
	o := f.opts(t)
	p, err := Pack(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(filepath.Join(real, f.id+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{fh}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a holder process: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	fh.Close()
	err = Finish([]*Packed{p}, nil)[0]
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "open for writing by process") {
		t.Fatalf("err = %v, want ErrChanged naming the writer", err)
	}
	if _, err := os.Stat(ArchivePath(o.Root, f.folder, f.id)); err == nil {
		t.Error("archive kept although the session stays")
	}
	for rel := range f.files {
		if got, err := os.ReadFile(filepath.Join(f.cfg, rel)); err != nil || !bytes.Equal(got, f.files[rel]) {
			t.Errorf("%s changed or removed: %v", rel, err)
		}
	}

	// Under CCM_LIVE_DETECT=portable nobody is asked who holds a file, as
	// on a system that cannot tell: the session, unchanged, is archived.
	t.Setenv(fsutil.LiveDetectEnv, "portable")
	p, err = Pack(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Finish([]*Packed{p}, nil)[0]; err != nil {
		t.Fatalf("portable: %v, want the session archived", err)
	}
	if _, err := os.Stat(filepath.Join(real, f.id+".jsonl")); err == nil {
		t.Error("portable: the transcript is still there")
	}
}

// Archiving through a symlinked project folder removes the files inside
// the target but keeps the link, and unarchive puts them back through it.
func TestSymlinkedProjectFolderRoundTrip(t *testing.T) {
	f := newFixture(t)
	real := filepath.Join(t.TempDir(), "elsewhere")
	link := filepath.Join(f.cfg, "projects", f.folder)
	if err := os.Rename(link, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	o := f.opts(t)
	res, err := Create(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the project folder's symlink is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, f.id+".jsonl")); err == nil {
		t.Fatal("transcript still in the link's target after archiving")
	}
	if _, err := Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range f.files {
		got, err := os.ReadFile(filepath.Join(f.cfg, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not restored byte for byte: %v", rel, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(real, f.id+".jsonl")); err != nil || !bytes.Equal(got, f.files["projects/"+f.folder+"/"+f.id+".jsonl"]) {
		t.Errorf("transcript not restored inside the link's target: %v", err)
	}
}

// testdata/v1 holds an archive written by ccm before archives carried
// their content (format 1), of a purged transcript with 28 stubs
// (scripts/gen -turns 4 -seed 7, ccm purge --all --threshold 1000
// --recent-turns 0 --backup none, ccm archive), and the content of three
// of those stubs. It still unarchives; its stubs depend on the store,
// and Extract names those whose content the store does not have.
func TestFormat1ArchiveStillExtracts(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	for _, stored := range []int{0, 3} {
		t.Run(fmt.Sprintf("%d in the store", stored), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "archive")
			if err := os.MkdirAll(filepath.Join(root, "-tmp-v1"), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, ext := range []string{Ext, ManifestExt} {
				data, err := os.ReadFile(filepath.Join("testdata", "v1", "-tmp-v1", id+ext))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(root, "-tmp-v1", id+ext), data, 0o600)
			}
			side, err := ReadSidecar(SidecarPath(ArchivePath(root, "-tmp-v1", id)))
			if err != nil || side.Format != FormatV1 || len(side.Refs) != 28 || side.SelfContained() {
				t.Fatalf("fixture: %v %+v", err, side)
			}
			st, err := ccm.Open(filepath.Join(t.TempDir(), "store"))
			if err != nil {
				t.Fatal(err)
			}
			contents, _ := filepath.Glob(filepath.Join("testdata", "v1", "content", "*"))
			have := map[string]bool{}
			for _, p := range contents[:stored] {
				data, _ := os.ReadFile(p)
				k, err := st.Put(context.Background(), data, ccm.Source{Type: "json"}, ccm.PinNone, "")
				if err != nil || k.Hex() != filepath.Base(p) {
					t.Fatalf("put %s: %v %s", p, err, k)
				}
				have[string(k)] = true
			}
			cfg := t.TempDir()
			x, err := Extract(context.Background(), ArchivePath(root, "-tmp-v1", id), cfg, ExtractOptions{Now: time.Now(), Store: st})
			if err != nil {
				t.Fatal(err)
			}
			if x.Content != 0 || len(x.StaysStub) != 28-stored {
				t.Errorf("content %d, stays stub %d, want 0 and %d", x.Content, len(x.StaysStub), 28-stored)
			}
			for _, k := range x.StaysStub {
				if have[k] || !contains(side.Refs, k) {
					t.Errorf("%s said to stay a stub", k)
				}
			}
			if _, err := os.Stat(filepath.Join(cfg, "projects", "-tmp-v1", id+".jsonl")); err != nil {
				t.Error(err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
