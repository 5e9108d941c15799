package tar

import (
	stdtar "archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// member is a header and its content.
type member struct {
	h    Header
	data []byte
}

// members covers what ccm archives and the edges of the ustar fields:
// names at, around and far past 100 bytes, non-ASCII names, sizes around
// the block size, times with nanoseconds, before 1970 and past the octal
// field's 2242.
func members() []member {
	r := rand.New(rand.NewPCG(1, 2))
	content := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return b
	}
	t0 := time.Date(2026, 1, 5, 9, 12, 16, 45_000_000, time.UTC)
	ms := []member{
		{Header{Typeflag: TypeDir, Name: "projects/-Users-me-proj/", Mode: 0o700, ModTime: t0.Truncate(time.Second)}, nil},
		{Header{Typeflag: TypeReg, Name: "projects/-Users-me-proj/a95edcd2-17dc-44ec-a2bb-2f23a4bb0bac.jsonl", Mode: 0o600, ModTime: t0}, content(70_000)},
		{Header{Typeflag: TypeReg, Name: strings.Repeat("n", 100), Mode: 0o644, ModTime: t0}, content(0)},
		{Header{Typeflag: TypeReg, Name: strings.Repeat("l", 101), Mode: 0o644, ModTime: t0}, content(1)},
		{Header{Typeflag: TypeReg, Name: "projects/" + strings.Repeat("deep/", 60) + "s.jsonl", Mode: 0o600, ModTime: t0}, content(511)},
		{Header{Typeflag: TypeReg, Name: "projects/-tmp-caf--/café 😀.jsonl", Mode: 0o600, ModTime: t0}, content(512)},
		{Header{Typeflag: TypeReg, Name: "old.jsonl", Mode: 0o400, ModTime: time.Unix(-1, -250_000_000)}, content(513)},
		{Header{Typeflag: TypeReg, Name: "epoch.jsonl", Mode: 0o600, ModTime: time.Unix(0, 0)}, content(1024)},
		{Header{Typeflag: TypeReg, Name: "far.jsonl", Mode: 0o600, ModTime: time.Unix(1<<33, 7)}, content(3)},
		{Header{Typeflag: TypeReg, Name: "manifest.json", Mode: 0o600, ModTime: t0}, []byte(`{"format":1}`)},
	}
	return ms
}

func writeOurs(t testing.TB, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := NewWriter(&buf)
	for _, m := range ms {
		h := m.h
		h.Size, h.Format = int64(len(m.data)), FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readOurs(t testing.TB, b []byte) []member {
	t.Helper()
	tr := NewReader(bytes.NewReader(b))
	var got []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, member{*h, data})
	}
}

func same(t *testing.T, who string, want []member, got []member) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d members, want %d", who, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.h.Name != w.h.Name || g.h.Typeflag != w.h.Typeflag || g.h.Mode != w.h.Mode || !g.h.ModTime.Equal(w.h.ModTime) || g.h.Size != int64(len(w.data)) || !bytes.Equal(g.data, w.data) {
			t.Errorf("%s: member %d:\n  got  %q %c %o %v %d (%d bytes)\n  want %q %c %o %v %d", who, i,
				g.h.Name, g.h.Typeflag, g.h.Mode, g.h.ModTime, g.h.Size, len(g.data), w.h.Name, w.h.Typeflag, w.h.Mode, w.h.ModTime, len(w.data))
		}
	}
}

// What this package writes, archive/tar reads back exactly, and so does
// this package.
func TestWriteReadByStandardLibrary(t *testing.T) {
	ms := members()
	b := writeOurs(t, ms)
	same(t, "ours", ms, readOurs(t, b))
	tr := stdtar.NewReader(bytes.NewReader(b))
	var got []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got = append(got, member{Header{Typeflag: h.Typeflag, Name: h.Name, Mode: h.Mode, Size: h.Size, ModTime: h.ModTime}, data})
	}
	same(t, "archive/tar", ms, got)
}

// What archive/tar writes, in each of its formats, this package reads.
func TestReadStandardLibraryFormats(t *testing.T) {
	for _, f := range []stdtar.Format{stdtar.FormatPAX, stdtar.FormatGNU, stdtar.FormatUSTAR} {
		ms := members()
		var buf bytes.Buffer
		tw := stdtar.NewWriter(&buf)
		var want []member
		for _, m := range ms {
			h := &stdtar.Header{Typeflag: m.h.Typeflag, Name: m.h.Name, Mode: m.h.Mode, Size: int64(len(m.data)), ModTime: m.h.ModTime, Format: f}
			if f != stdtar.FormatPAX {
				h.ModTime = h.ModTime.Truncate(time.Second)
			}
			if err := tw.WriteHeader(h); err != nil {
				continue // what that format cannot hold
			}
			tw.Write(m.data)
			m.h.ModTime = h.ModTime
			want = append(want, m)
		}
		tw.Close()
		if len(want) < 4 {
			t.Fatalf("%v: only %d members written", f, len(want))
		}
		same(t, f.String(), want, readOurs(t, buf.Bytes()))
	}
}

// GNU tar lists and extracts what this package writes, names, modes,
// times and contents intact.
func TestGNUTarReads(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar program here")
	}
	ms := members()
	dir := t.TempDir()
	arc := filepath.Join(dir, "a.tar")
	if err := os.WriteFile(arc, writeOurs(t, ms), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o700)
	if b, err := exec.Command("tar", "-xf", arc, "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, b)
	}
	for _, m := range ms {
		p := filepath.Join(out, m.h.Name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", m.h.Name, err)
			continue
		}
		if m.h.Typeflag == TypeDir {
			continue // its time is that of its last extracted child
		}
		if data, _ := os.ReadFile(p); !bytes.Equal(data, m.data) || fi.Mode().Perm() != os.FileMode(m.h.Mode) {
			t.Errorf("%s: %d bytes, mode %v", m.h.Name, len(data), fi.Mode().Perm())
		}
		if m.h.ModTime.Unix() >= 0 && !fi.ModTime().Equal(m.h.ModTime) {
			t.Errorf("%s: mtime %v, want %v", m.h.Name, fi.ModTime(), m.h.ModTime)
		}
	}
}

// Damaged archives are errors wrapping ErrHeader or a short read, never a
// panic, a hang or a member with wrong content: every truncation, and
// every single-byte change of the headers.
func TestDamagedArchives(t *testing.T) {
	b := writeOurs(t, members()[:4])
	read := func(b []byte) (n int, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		tr := NewReader(bytes.NewReader(b))
		for {
			if _, err = tr.Next(); err != nil {
				break
			}
			if _, err = io.Copy(io.Discard, tr); err != nil {
				break
			}
			n++
		}
		if err == io.EOF {
			err = nil
		}
		return n, err
	}
	for cut := 0; cut < len(b)-2*blockSize; cut += 97 {
		if _, err := read(b[:cut]); err == nil && cut%blockSize != 0 {
			t.Fatalf("cut at %d: no error", cut)
		} else if err != nil && strings.HasPrefix(err.Error(), "panic") {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	for off := 0; off < 3*blockSize; off++ {
		c := bytes.Clone(b)
		c[off] ^= 0x5a
		if _, err := read(c); err != nil && (strings.HasPrefix(err.Error(), "panic") || !errors.Is(err, ErrHeader) && !errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("byte %d changed: %v", off, err)
		}
	}
	for _, bad := range []string{"99999999 path=x\n", "5 a=b\n", "0 =\n", "11 mtime=x\n", "12 size=-1\n", "30 mtime=1.5.5\n"} {
		var buf bytes.Buffer
		var blk [blockSize]byte
		ustar(&blk, "PaxHeaders.0/x", 0o644, int64(len(bad)), 0, typePAX)
		buf.Write(blk[:])
		buf.WriteString(bad)
		buf.Write(make([]byte, padding(int64(len(bad)))))
		ustar(&blk, "x", 0o644, 0, 0, TypeReg)
		buf.Write(blk[:])
		if _, err := read(buf.Bytes()); !errors.Is(err, ErrHeader) {
			t.Errorf("pax record %q: %v, want ErrHeader", bad, err)
		}
	}
}

// FuzzReader: no input makes the reader panic or hang.
func FuzzReader(f *testing.F) {
	f.Add(writeOurs(f, members()[:3]))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := NewReader(bytes.NewReader(b))
		for i := 0; i < 100; i++ {
			if _, err := tr.Next(); err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, tr); err != nil {
				return
			}
		}
	})
}

// The writer refuses what it cannot write, and content beyond or short
// of a header's size.
func TestWriterRefuses(t *testing.T) {
	tw := NewWriter(io.Discard)
	if err := tw.WriteHeader(&Header{Typeflag: '2', Name: "link"}); err == nil {
		t.Error("a symlink was accepted")
	}
	if err := tw.WriteHeader(&Header{Typeflag: TypeReg, Name: "a", Size: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("abc")); !errors.Is(err, ErrWriteTooLong) {
		t.Errorf("3 bytes into 2: %v", err)
	}
	tw = NewWriter(io.Discard)
	tw.WriteHeader(&Header{Typeflag: TypeReg, Name: "a", Size: 2})
	tw.Write([]byte("a"))
	if err := tw.Close(); err == nil {
		t.Error("a short member was closed without an error")
	}
}
