//go:build unix

package fsutil

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRegularRefusesSpecialFiles: a FIFO with no writer, a socket, a
// device and a directory are refused at once; a regular file and a
// symlink to one open.
func TestOpenRegularRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.jsonl")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, p := range []string{fifo, sock, "/dev/null", dir} {
		f, err := OpenRegular(p)
		if err == nil {
			f.Close()
			t.Errorf("%s opened", p)
			continue
		}
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", p, err)
		}
	}
	reg := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(reg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{reg, link} {
		f, err := OpenRegular(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		b := make([]byte, 3)
		if n, err := f.Read(b); n != 3 || err != nil {
			t.Errorf("%s: read %d, %v", p, n, err)
		}
		f.Close()
	}
}
