package fsutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"ccm/internal/testutil"
)

func testFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(testutil.TempDir(t), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestOpenRanges: ranges that start inside a page, at 0, span pages and
// are empty give exactly the file's bytes.
func TestOpenRanges(t *testing.T) {
	data := make([]byte, 3*os.Getpagesize()+123)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	f := testFile(t, data)
	for _, rg := range [][2]int64{{0, int64(len(data))}, {1, 10}, {int64(os.Getpagesize()) - 3, 7}, {5000, int64(len(data)) - 5000}, {100, 0}} {
		r, err := MapRegion(f, rg[0], rg[1])
		if err != nil {
			t.Fatalf("%v: %v", rg, err)
		}
		if !bytes.Equal(r.Data, data[rg[0]:rg[0]+rg[1]]) || r.Off != rg[0] {
			t.Errorf("%v: got %d bytes at %d, not the file's", rg, len(r.Data), r.Off)
		}
		if err := r.Close(); err != nil {
			t.Errorf("%v: close: %v", rg, err)
		}
		if r.Data != nil {
			t.Errorf("%v: Data kept after Close", rg)
		}
	}
	if _, err := MapRegion(f, -1, 3); err == nil {
		t.Error("a negative offset was accepted")
	}
}

// TestGuardTruncated: a mapped file truncated by someone else makes the
// read fault; GuardMapped reports ErrShrunk instead of the process crashing.
func TestGuardTruncated(t *testing.T) {
	page := os.Getpagesize()
	f := testFile(t, bytes.Repeat([]byte("x"), 4*page))
	r, err := MapRegion(f, 0, int64(4*page))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Mapped() {
		t.Skip("this system does not map files: nothing can fault")
	}
	if err := os.Truncate(f.Name(), 0); err != nil {
		t.Fatal(err)
	}
	var sum int
	err = GuardMapped(func() error {
		for _, b := range r.Data[3*page:] {
			sum += int(b)
		}
		return nil
	})
	if !errors.Is(err, ErrShrunk) {
		t.Fatalf("read of a truncated mapping: %v (sum %d), want ErrShrunk", err, sum)
	}
	want := errors.New("fn's own error")
	if err := GuardMapped(func() error { return want }); err != want {
		t.Errorf("GuardMapped changed fn's error: %v", err)
	}
}
