package transcript

import (
	"bytes"
	"io"
)

// Kind classifies a line of a transcript file.
type Kind uint8

const (
	// Object is a line holding one JSON object: a record.
	Object Kind = iota
	// Blank is an empty or whitespace-only line.
	Blank
	// Invalid is a line that is not valid JSON, or valid JSON that is not
	// an object (an array, a string, a number). It is kept verbatim.
	Invalid
	// Torn is a final line without a trailing newline that is not a
	// complete JSON object: a write that was cut off.
	Torn
	// NUL is a run of NUL bytes, as an interrupted append leaves behind.
	NUL
)

var kindNames = [...]string{Object: "object", Blank: "blank", Invalid: "invalid", Torn: "torn", NUL: "nul"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Line is one line of a transcript as read, never modified.
type Line struct {
	Num    int    // 1-based line number
	Offset int64  // byte offset of the line's first byte in the stream
	Raw    []byte // the line's bytes including its terminator; valid until the next call to Next
	Kind   Kind
	// Terminated is false for a final line that has no trailing newline.
	Terminated bool
}

// Body returns the line without its "\n" or "\r\n" terminator.
func (l Line) Body() []byte {
	b := l.Raw
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// Reader splits a stream into lines of any length. Memory is bounded by
// the longest line: lines are returned straight from one buffer, which
// grows to fit the longest line seen and is reused. A long line is read
// into that buffer directly; assembling it from a bufio.Reader's chunks
// copied every byte of it a second time (half of the 200 MB benchmark's
// bytes sit in 135 lines of 0.3 to 4 MB).
type Reader struct {
	r          io.Reader
	buf        []byte
	start, end int // unread bytes are buf[start:end]
	scanned    int // buf[start:start+scanned] holds no '\n'
	num        int
	offset     int64
	rerr       error // from r, reported once the buffer is drained
	err        error
	// Classify controls whether lines are validated as JSON. It is on by
	// default; a caller that only copies bytes can switch it off.
	Classify bool
	// Structural classifies with ValidStructure instead of ValidJSON: a
	// line whose strings hold what JSON forbids is an Object then. Torn
	// and broken lines are still told apart. For passes that walk a
	// record's structure to what they need (the hooks').
	Structural bool
}

// readerBufSize is the initial buffer and the least read size.
const readerBufSize = 256 << 10

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, readerBufSize), Classify: true}
}

// NewReaderBytes returns a Reader over data held in memory (a mapped
// file region): each line's Raw is a view into data, never copied, and
// stays valid as long as data does. The Reader never writes to data.
func NewReaderBytes(data []byte) *Reader {
	return &Reader{buf: data, end: len(data), rerr: io.EOF, Classify: true}
}

// Next returns the next line, or io.EOF after the last one. Any other
// error is a read error of the underlying reader. The returned Raw slice
// is only valid until the following call.
func (r *Reader) Next() (Line, error) {
	if r.err != nil {
		return Line{}, r.err
	}
	raw, err := r.line()
	if err != nil {
		r.err = err
		return Line{}, err
	}
	r.num++
	l := Line{Num: r.num, Offset: r.offset, Raw: raw, Terminated: raw[len(raw)-1] == '\n'}
	r.offset += int64(len(raw))
	if r.Classify {
		if r.Structural {
			l.Kind = classifyBy(l.Body(), l.Terminated, ValidStructure)
		} else {
			l.Kind = classify(l.Body(), l.Terminated)
		}
	}
	return l, nil
}

// line returns the next line with its terminator (the last one may have
// none), reading more as needed.
func (r *Reader) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.start+r.scanned:r.end], '\n'); i >= 0 {
			n := r.scanned + i + 1
			raw := r.buf[r.start : r.start+n]
			r.start += n
			r.scanned = 0
			return raw, nil
		}
		r.scanned = r.end - r.start
		if r.rerr != nil {
			if r.rerr != io.EOF {
				return nil, r.rerr // never a partial line as if it were the last
			}
			if r.start == r.end {
				return nil, io.EOF
			}
			raw := r.buf[r.start:r.end] // a final line without a newline
			r.start = r.end
			r.scanned = 0
			return raw, nil
		}
		r.fill()
	}
}

// fill reads more into the buffer: it first moves the unread bytes to the
// front, and grows the buffer when a line fills it: twice as large up to
// 1 MB, then by a quarter. The buffer stays as large as the longest line
// so far for the rest of the file, so a 4.6 MB line kept 8 MB when the
// growth was always twofold; a quarter copies the line's bytes a few more
// times as it grows (some milliseconds for 50 MB).
func (r *Reader) fill() {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if len(r.buf)-r.end < readerBufSize/2 {
		grow := len(r.buf)
		if grow > 1<<20 {
			grow /= 4
		}
		nb := make([]byte, len(r.buf)+grow)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	// Like bufio, allow a reader a few empty reads before giving up.
	for try := 0; try < 100; try++ {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}

// Reset makes the Reader read src from its start, keeping its buffer (up
// to 8 MB of it), so that one Reader reads many files without growing a
// buffer for each.
func (r *Reader) Reset(src io.Reader) {
	buf := r.buf
	if cap(buf) > 8<<20 || cap(buf) < readerBufSize {
		buf = make([]byte, readerBufSize)
	}
	*r = Reader{r: src, buf: buf[:cap(buf)], Classify: r.Classify, Structural: r.Structural}
}

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.offset }

// classify tells a record apart from the kinds of damage a transcript
// can carry.
func classify(body []byte, terminated bool) Kind {
	return classifyBy(body, terminated, ValidJSON)
}

// classifyBy is classify with valid deciding which lines are records.
func classifyBy(body []byte, terminated bool, valid func([]byte) bool) Kind {
	trimmed := bytes.TrimLeft(body, " \t\r")
	if len(trimmed) == 0 {
		if !terminated {
			return Torn
		}
		return Blank
	}
	if trimmed[0] == 0 {
		if len(bytes.Trim(trimmed, "\x00 \t\r")) == 0 {
			return NUL
		}
		return Invalid
	}
	if trimmed[0] == '{' && valid(trimmed) {
		return Object
	}
	if !terminated {
		return Torn
	}
	return Invalid
}
