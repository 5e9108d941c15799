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

// ErrHeader is wrapped by every error about a malformed archive.
var ErrHeader = errors.New("tar: invalid archive")

// maxPAX bounds a pax extended header's size (archive/tar's bound too).
const maxPAX = 1 << 20

// Reader reads an archive.
type Reader struct {
	r    io.Reader
	left int64 // bytes of the current member not yet read
	pad  int64 // padding after it
	err  error
}

// NewReader reads an archive from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Next skips what is left of the current member and returns the next
// one's header; io.EOF at the end of the archive.
func (tr *Reader) Next() (*Header, error) {
	if tr.err != nil {
		return nil, tr.err
	}
	h, err := tr.next()
	if err != nil {
		tr.err = err
	}
	return h, err
}

func (tr *Reader) next() (*Header, error) {
	var pax map[string]string
	var longName string
	for {
		if err := tr.skip(tr.left + tr.pad); err != nil {
			return nil, err
		}
		tr.left, tr.pad = 0, 0
		var blk [blockSize]byte
		if _, err := io.ReadFull(tr.r, blk[:]); err != nil {
			if err == io.EOF {
				return nil, io.EOF // no end blocks: as archive/tar, an end
			}
			return nil, unexpected(err)
		}
		if blk == [blockSize]byte{} {
			// The end: a second zero block, or nothing, should follow.
			if _, err := io.ReadFull(tr.r, blk[:]); err != nil && err != io.EOF {
				return nil, unexpected(err)
			} else if err == nil && blk != [blockSize]byte{} {
				return nil, fmt.Errorf("%w: data after an end block", ErrHeader)
			}
			return nil, io.EOF
		}
		h, err := parseHeader(&blk)
		if err != nil {
			return nil, err
		}
		tr.left, tr.pad = h.Size, padding(h.Size)
		switch h.Typeflag {
		case typePAX, typeGPAX, typeGNULongName, typeGNULongLink:
			if h.Size > maxPAX {
				return nil, fmt.Errorf("%w: extended header of %d bytes", ErrHeader, h.Size)
			}
			data := make([]byte, h.Size)
			if _, err := io.ReadFull(tr.r, data); err != nil {
				return nil, unexpected(err)
			}
			tr.left = 0
			switch h.Typeflag {
			case typePAX:
				if pax, err = parsePAX(data); err != nil {
					return nil, err
				}
			case typeGPAX:
				if _, err := parsePAX(data); err != nil {
					return nil, err
				}
			case typeGNULongName:
				if longName = string(trimNUL(data)); longName == "" {
					return nil, fmt.Errorf("%w: empty long name", ErrHeader)
				}
			}
			continue
		case typeRegA:
			h.Typeflag = TypeReg
			if strings.HasSuffix(h.Name, "/") {
				h.Typeflag = TypeDir
			}
		}
		if longName != "" {
			h.Name = longName
		}
		if err := applyPAX(h, pax); err != nil {
			return nil, err
		}
		tr.left, tr.pad = h.Size, padding(h.Size)
		if headerOnly(h.Typeflag) {
			// Links, devices, FIFOs and directories have no content,
			// whatever their size field says (archive/tar reads them so).
			tr.left, tr.pad = 0, 0
			if h.Typeflag == TypeDir {
				h.Size = 0
			}
		}
		return h, nil
	}
}

// headerOnly tells the member types that have no content.
func headerOnly(t byte) bool { return t >= '1' && t <= '6' }

// Read reads the current member's content.
func (tr *Reader) Read(p []byte) (int, error) {
	if tr.err != nil {
		return 0, tr.err
	}
	if tr.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > tr.left {
		p = p[:tr.left]
	}
	n, err := tr.r.Read(p)
	tr.left -= int64(n)
	if err == io.EOF && tr.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		tr.err = err
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// skip discards n bytes.
func (tr *Reader) skip(n int64) error {
	if n == 0 {
		return nil
	}
	got, err := io.CopyN(io.Discard, tr.r, n)
	if got < n {
		return unexpected(err)
	}
	return nil
}

func unexpected(err error) error {
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// parseHeader reads a ustar (or GNU) header block.
func parseHeader(blk *[blockSize]byte) (*Header, error) {
	magic := string(blk[257:265])
	if magic != "ustar\x0000" && magic != "ustar  \x00" {
		return nil, fmt.Errorf("%w: not a ustar header", ErrHeader)
	}
	want, err := parseCount(blk[148:156])
	if err != nil {
		return nil, err
	}
	if sum := checksum(blk); int64(sum) != want && int64(signedChecksum(blk)) != want {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrHeader)
	}
	h := &Header{Typeflag: blk[156], Format: FormatPAX}
	h.Name = string(trimNUL(blk[0:100]))
	if magic == "ustar\x0000" {
		if prefix := trimNUL(blk[345:500]); len(prefix) > 0 {
			h.Name = string(prefix) + "/" + h.Name
		}
	}
	if h.Mode, err = parseCount(blk[100:108]); err != nil {
		return nil, err
	}
	if h.Size, err = parseCount(blk[124:136]); err != nil {
		return nil, err
	}
	mtime, err := parseNumber(blk[136:148])
	if err != nil {
		return nil, err
	}
	h.ModTime = time.Unix(mtime, 0)
	return h, nil
}

func signedChecksum(blk *[blockSize]byte) int {
	sum := 0
	for i, b := range blk {
		if i >= 148 && i < 156 {
			b = ' '
		}
		sum += int(int8(b))
	}
	return sum
}

// parseNumber reads a numeric header field: octal digits (spaces and NULs
// around them allowed), or GNU's base-256 (a first byte of 0x80, or 0xff
// for a negative number) for what octal cannot hold.
func parseNumber(f []byte) (int64, error) {
	if len(f) > 0 && f[0]&0x80 != 0 {
		if f[0] != 0x80 && f[0] != 0xff {
			return 0, fmt.Errorf("%w: number out of range", ErrHeader)
		}
		neg := f[0] == 0xff
		var v uint64
		for _, b := range f[1:] {
			if neg {
				b = ^b
			}
			if v > 1<<55 {
				return 0, fmt.Errorf("%w: number out of range", ErrHeader)
			}
			v = v<<8 | uint64(b)
		}
		if neg {
			return -int64(v) - 1, nil
		}
		return int64(v), nil
	}
	s := strings.Trim(string(trimNUL(f)), " ")
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 8, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: bad number %q", ErrHeader, s)
	}
	return v, nil
}

// parseCount is parseNumber for a field that cannot be negative.
func parseCount(f []byte) (int64, error) {
	v, err := parseNumber(f)
	if err == nil && v < 0 {
		err = fmt.Errorf("%w: negative size or mode", ErrHeader)
	}
	return v, err
}

// parsePAX reads pax records: "<length> <key>=<value>\n" each.
func parsePAX(data []byte) (map[string]string, error) {
	recs := map[string]string{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 || sp > 10 {
			return nil, fmt.Errorf("%w: bad pax record", ErrHeader)
		}
		n, err := strconv.Atoi(string(data[:sp]))
		if err != nil || n <= sp+1 || n > len(data) || data[n-1] != '\n' {
			return nil, fmt.Errorf("%w: bad pax record", ErrHeader)
		}
		kv := data[sp+1 : n-1]
		eq := bytes.IndexByte(kv, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("%w: bad pax record", ErrHeader)
		}
		recs[string(kv[:eq])] = string(kv[eq+1:])
		data = data[n:]
	}
	return recs, nil
}

// applyPAX sets the header fields that pax records override.
func applyPAX(h *Header, recs map[string]string) error {
	if p, ok := recs["path"]; ok {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return fmt.Errorf("%w: bad pax path", ErrHeader)
		}
		h.Name = p
	}
	if s, ok := recs["size"]; ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("%w: bad pax size %q", ErrHeader, s)
		}
		h.Size = v
	}
	if s, ok := recs["mtime"]; ok {
		t, err := parsePAXTime(s)
		if err != nil {
			return err
		}
		h.ModTime = t
	}
	return nil
}

// parsePAXTime reads decimal seconds with an optional fraction and sign.
func parsePAXTime(s string) (time.Time, error) {
	bad := fmt.Errorf("%w: bad pax time %q", ErrHeader, s)
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	secs, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || secs < 0 || whole == "" {
		return time.Time{}, bad
	}
	var nsec int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9] // finer than a nanosecond: cut
		}
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return time.Time{}, bad
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		nsec = f
	}
	if neg {
		return time.Unix(-secs, -nsec), nil
	}
	return time.Unix(secs, nsec), nil
}
