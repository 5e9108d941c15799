// Package tar reads and writes the subset of the POSIX tar format (ustar
// headers with pax extended headers) that ccm's session archives use:
// regular files and directories, with names, modes, sizes and
// modification times to the nanosecond. Its API is that subset of the
// standard library's archive/tar, whose every import pulls in os/user,
// which links a binary against the C library whenever cgo is available:
// with this package `go install ./cmd/ccm` gives a static binary.
//
// What it writes, GNU tar, bsdtar and archive/tar read; what it reads is
// that, and the same from those tools (other member types are refused).
// Input is hostile until checked: checksums, sizes and pax records are
// validated and bounded, and a bad archive is an error, never a panic.
package tar

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Member types.
const (
	TypeReg  byte = '0' // a regular file
	TypeDir  byte = '5' // a directory
	typeRegA byte = 0   // a regular file, pre-POSIX
	typePAX  byte = 'x'
	typeGPAX byte = 'g'
	// GNU tar's long names, read but not written.
	typeGNULongName byte = 'L'
	typeGNULongLink byte = 'K'
)

// Format is a header's format. Only pax is written; it is accepted for
// compatibility with archive/tar's Header.
type Format int

// FormatPAX is the POSIX.1-2001 format: ustar headers, with pax records
// for what does not fit them.
const FormatPAX Format = 4

// Header is one member of an archive.
type Header struct {
	Typeflag byte
	Name     string
	Mode     int64
	Size     int64
	ModTime  time.Time
	Format   Format
}

const blockSize = 512

// ErrWriteTooLong is returned by Write past the size its header gave.
var ErrWriteTooLong = errors.New("tar: write too long")

// Writer writes an archive.
type Writer struct {
	w      io.Writer
	left   int64 // bytes of the current member still to write
	pad    int64 // padding after it
	closed bool
	err    error
}

// NewWriter writes an archive to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteHeader ends the current member (which must have been written whole)
// and starts h's. Names longer than the ustar field, or not ASCII, sizes
// beyond 8 GiB and times with nanoseconds or outside the octal field go
// to a pax extended header before it.
func (tw *Writer) WriteHeader(h *Header) error {
	if err := tw.finish(); err != nil {
		return err
	}
	if h.Typeflag != TypeReg && h.Typeflag != TypeDir {
		return fmt.Errorf("tar: %s: member type %q not supported", h.Name, h.Typeflag)
	}
	if h.Name == "" || strings.IndexByte(h.Name, 0) >= 0 || h.Size < 0 || h.Mode < 0 || h.Mode > 0o7777777 {
		return fmt.Errorf("tar: invalid header for %q", h.Name)
	}
	size := h.Size
	if h.Typeflag == TypeDir {
		size = 0
	}
	var pax []string
	name := h.Name
	if len(name) > 100 || !ascii(name) {
		pax = append(pax, record("path", name))
		name = asciiPrefix(name, 100)
	}
	if size > maxOctal11 {
		pax = append(pax, record("size", strconv.FormatInt(size, 10)))
	}
	secs, nsec := h.ModTime.Unix(), h.ModTime.Nanosecond()
	if nsec != 0 || secs < 0 || secs > maxOctal11 {
		pax = append(pax, record("mtime", paxTime(secs, nsec)))
	}
	if len(pax) > 0 {
		data := []byte(strings.Join(pax, ""))
		var blk [blockSize]byte
		ustar(&blk, "PaxHeaders.0/"+asciiPrefix(baseName(h.Name), 80), 0o644, int64(len(data)), 0, typePAX)
		if err := tw.write(blk[:]); err != nil {
			return err
		}
		if err := tw.write(data); err != nil {
			return err
		}
		if err := tw.write(make([]byte, padding(int64(len(data))))); err != nil {
			return err
		}
	}
	var blk [blockSize]byte
	mtime := secs
	if mtime < 0 || mtime > maxOctal11 {
		mtime = 0
	}
	ustar(&blk, name, h.Mode, min(size, maxOctal11), mtime, h.Typeflag)
	if err := tw.write(blk[:]); err != nil {
		return err
	}
	tw.left, tw.pad = size, padding(size)
	return nil
}

// Write writes the current member's content.
func (tw *Writer) Write(p []byte) (int, error) {
	if tw.err != nil {
		return 0, tw.err
	}
	over := false
	if int64(len(p)) > tw.left {
		p, over = p[:tw.left], true
	}
	n, err := tw.w.Write(p)
	tw.left -= int64(n)
	if err != nil {
		tw.err = err
		return n, err
	}
	if over {
		return n, ErrWriteTooLong
	}
	return n, nil
}

// Close ends the last member and writes the two zero blocks that end an
// archive. It does not close the underlying writer.
func (tw *Writer) Close() error {
	if tw.closed {
		return tw.err
	}
	if err := tw.finish(); err != nil {
		return err
	}
	tw.closed = true
	return tw.write(make([]byte, 2*blockSize))
}

// finish pads the current member, which must be complete.
func (tw *Writer) finish() error {
	if tw.err != nil {
		return tw.err
	}
	if tw.closed {
		return errors.New("tar: write after close")
	}
	if tw.left > 0 {
		return fmt.Errorf("tar: missed writing %d bytes", tw.left)
	}
	if tw.pad > 0 {
		if err := tw.write(make([]byte, tw.pad)); err != nil {
			return err
		}
		tw.pad = 0
	}
	return nil
}

func (tw *Writer) write(b []byte) error {
	if tw.err != nil {
		return tw.err
	}
	if _, err := tw.w.Write(b); err != nil {
		tw.err = err
	}
	return tw.err
}

// maxOctal11 is the largest value of an 11-digit octal field.
const maxOctal11 = 1<<33 - 1

// ustar fills blk with a ustar header.
func ustar(blk *[blockSize]byte, name string, mode, size, mtime int64, typ byte) {
	copy(blk[0:100], name)
	octal(blk[100:108], mode)
	octal(blk[108:116], 0) // uid
	octal(blk[116:124], 0) // gid
	octal(blk[124:136], size)
	octal(blk[136:148], mtime)
	blk[156] = typ
	copy(blk[257:265], "ustar\x0000")
	copy(blk[148:156], "        ")
	octal(blk[148:155], int64(checksum(blk)))
	blk[155] = ' '
}

// octal writes v into f as zero-padded octal digits and a NUL.
func octal(f []byte, v int64) {
	s := strconv.FormatInt(v, 8)
	for len(s) < len(f)-1 {
		s = "0" + s
	}
	copy(f, s)
	f[len(f)-1] = 0
}

// checksum is the unsigned sum of a header's bytes, its checksum field
// counted as spaces.
func checksum(blk *[blockSize]byte) int {
	sum := 0
	for i, b := range blk {
		if i >= 148 && i < 156 {
			b = ' '
		}
		sum += int(b)
	}
	return sum
}

// record is one pax record: "<length> <key>=<value>\n", the length
// counting itself.
func record(key, value string) string {
	body := " " + key + "=" + value + "\n"
	n := len(body) + 1
	for n != len(strconv.Itoa(n))+len(body) {
		n = len(strconv.Itoa(n)) + len(body)
	}
	return strconv.Itoa(n) + body
}

// paxTime formats seconds and nanoseconds as a pax time: decimal seconds,
// a fraction without trailing zeros, a '-' before the whole for times
// before 1970.
func paxTime(secs int64, nsec int) string {
	if secs < 0 && nsec != 0 {
		secs, nsec = secs+1, 1e9-nsec // -1.25 is -(1 + 0.25)
		return "-" + fraction(-secs, nsec)
	}
	return fraction(secs, nsec)
}

func fraction(secs int64, nsec int) string {
	s := strconv.FormatInt(secs, 10)
	if nsec == 0 {
		return s
	}
	f := strings.TrimRight(fmt.Sprintf("%09d", nsec), "0")
	return s + "." + f
}

func padding(n int64) int64 { return -n & (blockSize - 1) }

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// asciiPrefix is the longest prefix of s of at most n bytes with every
// non-ASCII byte replaced by '_': the ustar name of a member whose real
// name is in a pax record.
func asciiPrefix(s string, n int) string {
	b := []byte(s[:min(len(s), n)])
	for i, c := range b {
		if c >= 0x80 {
			b[i] = '_'
		}
	}
	return string(b)
}

func baseName(s string) string {
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// trimNUL cuts a header field at its first NUL.
func trimNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
