//go:build unix

package fsutil

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenPrivate: a symlink at the path is refused for every open mode
// and its target is left as it was; a FIFO (with and without a reader),
// a socket, a device and a directory are refused at once, without
// blocking; a missing file is created 0600 and a regular one appended to.
func TestOpenPrivate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "index.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "captures.jsonl")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	flags := []int{os.O_RDONLY, os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_WRONLY | os.O_CREATE | os.O_TRUNC}
	for _, p := range []string{link, dangling} {
		for _, fl := range flags {
			f, err := OpenPrivate(p, fl)
			if err == nil {
				f.Close()
				t.Errorf("%s (flags %#x) opened", p, fl)
			} else if !errors.Is(err, ErrSymlink) {
				t.Errorf("%s (flags %#x): %v, want ErrSymlink", p, fl, err)
			}
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("target changed: %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("target mode %v", fi.Mode())
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("a dangling symlink's target was created")
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, sock, "/dev/null", dir} {
			for _, fl := range flags {
				f, err := OpenPrivate(p, fl)
				if err == nil {
					f.Close()
					t.Errorf("%s (flags %#x) opened", p, fl)
				} else if !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s (flags %#x): %v, want ErrNotRegular", p, fl, err)
				}
			}
		}
		// A FIFO with a reader: opening for writing would succeed; the
		// descriptor's type refuses it.
		r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer r.Close()
		if f, err := OpenPrivate(fifo, os.O_WRONLY|os.O_APPEND); err == nil || !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO with a reader: %v", err)
			if f != nil {
				f.Close()
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("OpenPrivate blocked on a special file")
	}

	reg := filepath.Join(dir, "sub", "new.log")
	for i := 0; i < 2; i++ {
		f, err := CreatePrivateAppend(reg)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		f.Close()
	}
	if fi, err := os.Lstat(reg); err != nil || fi.Mode() != FileMode {
		t.Errorf("created %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "line\nline\n" {
		t.Errorf("appended %q", b)
	}
	f, err := OpenPrivate(reg, os.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := SetModTime(f, when); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(reg); !fi.ModTime().Equal(when) {
		t.Errorf("mtime %v, want %v", fi.ModTime(), when)
	}
}
