package transcript

import (
	"bufio"
	"bytes"
	"errors"
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
// the longest line: short lines are returned straight from the buffered
// reader; a line longer than the buffer is assembled in one reusable
// buffer that grows to fit it.
type Reader struct {
	br     *bufio.Reader
	long   []byte
	num    int
	offset int64
	err    error
	// Classify controls whether lines are validated as JSON. It is on by
	// default; a caller that only copies bytes can switch it off.
	Classify bool
}

// readerBufSize is the bufio buffer: lines shorter than this cost no copy.
const readerBufSize = 256 << 10

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readerBufSize), Classify: true}
}

// Next returns the next line, or io.EOF after the last one. Any other
// error is a read error of the underlying reader. The returned Raw slice
// is only valid until the following call.
func (r *Reader) Next() (Line, error) {
	if r.err != nil {
		return Line{}, r.err
	}
	raw, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], raw...)
		for errors.Is(err, bufio.ErrBufferFull) {
			raw, err = r.br.ReadSlice('\n')
			r.long = append(r.long, raw...)
		}
		raw = r.long
	}
	if err != nil && err != io.EOF {
		r.err = err
		return Line{}, err
	}
	if len(raw) == 0 {
		r.err = io.EOF
		return Line{}, io.EOF
	}
	if err == io.EOF {
		r.err = io.EOF // the next call ends the stream
	}
	r.num++
	l := Line{Num: r.num, Offset: r.offset, Raw: raw, Terminated: raw[len(raw)-1] == '\n'}
	r.offset += int64(len(raw))
	if r.Classify {
		l.Kind = classify(l.Body(), l.Terminated)
	}
	return l, nil
}

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.offset }

// classify tells a record apart from the kinds of damage a transcript
// can carry.
func classify(body []byte, terminated bool) Kind {
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
	if trimmed[0] == '{' && ValidJSON(trimmed) {
		return Object
	}
	if !terminated {
		return Torn
	}
	return Invalid
}
