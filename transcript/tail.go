package transcript

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// tailChunk is how much ReverseLines reads at a time.
const tailChunk = 64 << 10

// ErrTailLimit is returned by ReverseLines when it read limit bytes from
// the end without fn asking it to stop.
var ErrTailLimit = errors.New("tail read limit reached")

// ReverseLines calls fn with the lines of the first size bytes of ra, the
// last first, each with its offset and without its terminator. It stops
// when fn returns false, at the start of the file (nil), or once more than
// limit bytes were read (ErrTailLimit; limit <= 0 for none). Memory is
// bounded by the longest line it returns. A final line without a newline
// is returned like the others: callers parse it and skip it when torn.
// A line is valid only during its fn call: its bytes are reused.
//
// This is how hooks read a transcript: the facts they need (the last
// usage, the last compact boundary) are near its end, and a hook must take
// the same time on a 1 GB file as on a 1 MB one.
func ReverseLines(ra io.ReaderAt, size, limit int64, fn func(off int64, line []byte) bool) error {
	var (
		// buf holds the chunk read last followed by the start of the line
		// it ends in, carried over from the chunk read before (buf[:carry]
		// before the next read): one buffer as long as a chunk plus the
		// longest line, and no copy of each line that spans chunks.
		buf   []byte
		carry int
		nls   []int // the newlines of the current chunk
		end   = size
		read  int64
	)
	for end > 0 {
		if limit > 0 && read >= limit {
			return ErrTailLimit
		}
		// Past a few chunks, a chunk as long as the line carried: a long
		// line is read in doubling chunks, so moving its start up costs
		// linear time.
		n := int64(tailChunk)
		if carry > 4*tailChunk {
			n = int64(carry)
		}
		if limit > 0 {
			n = min(n, max(tailChunk, limit-read))
		}
		n = min(n, end)
		start := end - n
		if need := int(n) + carry; cap(buf) < need {
			nb := make([]byte, need, max(need, 2*cap(buf)))
			copy(nb[n:], buf[:carry])
			buf = nb
		} else {
			buf = buf[:need]
			copy(buf[n:], buf[:carry])
		}
		if _, err := ra.ReadAt(buf[:n], start); err != nil && err != io.EOF {
			return err
		}
		read += n
		// Split at newlines, from the end. The newlines are found front to
		// back: IndexByte is vectorised, LastIndexByte looks at one byte at
		// a time (a third of a hook's tail read). The carried part has none.
		nls = nls[:0]
		for i := 0; i < int(n); {
			j := bytes.IndexByte(buf[i:n], '\n')
			if j < 0 {
				break
			}
			nls = append(nls, i+j)
			i += j + 1
		}
		stop := len(buf) // the end of the line being cut out
		for k := len(nls) - 1; k >= 0; k-- {
			i := nls[k]
			line := buf[i+1 : stop]
			stop = i
			if len(bytes.TrimSpace(line)) > 0 && !fn(start+int64(i)+1, bytes.TrimRight(line, "\r")) {
				return nil
			}
		}
		// What is left has no newline: it is the start of a longer line.
		carry = stop
		end = start
	}
	if first := buf[:carry]; len(bytes.TrimSpace(first)) > 0 {
		fn(0, bytes.TrimRight(first, "\r"))
	}
	return nil
}

// ReverseLinesBytes is ReverseLines over data held in memory, whose first
// byte is at offset base: each line is a view into data, never copied, so
// it stays valid as long as data does.
func ReverseLinesBytes(data []byte, base int64, fn func(off int64, line []byte) bool) {
	var nls []int     // the newlines of the current chunk
	stop := len(data) // the end of the line being cut out
	for end := len(data); end > 0; {
		start := max(0, end-tailChunk)
		// As in ReverseLines, the newlines are found front to back.
		nls = nls[:0]
		for i := start; i < end; {
			j := bytes.IndexByte(data[i:end], '\n')
			if j < 0 {
				break
			}
			nls = append(nls, i+j)
			i += j + 1
		}
		for k := len(nls) - 1; k >= 0; k-- {
			i := nls[k]
			line := data[i+1 : stop]
			stop = i
			if len(bytes.TrimSpace(line)) > 0 && !fn(base+int64(i)+1, bytes.TrimRight(line, "\r")) {
				return
			}
		}
		end = start
	}
	if first := data[:stop]; len(bytes.TrimSpace(first)) > 0 {
		fn(base, bytes.TrimRight(first, "\r"))
	}
}

// TailFacts are the facts hooks read from the end of a transcript.
type TailFacts struct {
	// Usage is the last usage of a main-chain assistant record (not a
	// sidechain's, not a synthetic API-error record's); HasUsage is false
	// when there is none after the last compact boundary.
	Usage    Usage
	HasUsage bool
	// Model is that record's message.model.
	Model string
	// Text is that record's text blocks, joined (at most 4 KB of each).
	Text string
	// UsageOffset is that record's offset.
	UsageOffset int64
	// Boundary is the offset of the last main-chain compact boundary, -1
	// when none was seen within the read.
	Boundary int64
	// BoundaryPreTokens is its compactMetadata.preTokens.
	BoundaryPreTokens int64
}

// Fill is the context the last request used: input plus cache read plus
// cache creation tokens (output tokens are the answer, not the context).
func (u Usage) Fill() int64 { return u.Input + u.CacheRead + u.CacheCreation }

// ReadTail reads a transcript from its end until it finds the last
// main-chain usage, or a compact boundary after which there is none, or
// limit bytes. With wantBoundary it keeps going past the usage to find the
// last compact boundary too (within limit).
func ReadTail(ra io.ReaderAt, size, limit int64, wantBoundary bool) (TailFacts, error) {
	tf := TailFacts{Boundary: -1}
	err := ReverseLines(ra, size, limit, func(off int64, line []byte) bool { return tf.take(off, line, wantBoundary) })
	if errors.Is(err, ErrTailLimit) && tf.HasUsage {
		err = nil
	}
	return tf, err
}

// ReadTailBytes is ReadTail over the end of a transcript held in memory
// (data, whose first byte is at offset base in the file): the caller
// bounds the read by what it holds, and no line is copied.
func ReadTailBytes(data []byte, base int64, wantBoundary bool) TailFacts {
	tf := TailFacts{Boundary: -1}
	ReverseLinesBytes(data, base, func(off int64, line []byte) bool { return tf.take(off, line, wantBoundary) })
	return tf
}

// take is ReadTail's step: it reads one line (from the end) into tf and
// says whether to go on.
func (tf *TailFacts) take(off int64, line []byte, wantBoundary bool) bool {
	// Cheap filters first: most lines are neither.
	// '_' is rare in a line, '"' in every few bytes: the search for
	// the quoted name alone slid over most lines byte by byte.
	isBoundary := bytes.Contains(line, []byte(`_boundary"`)) && bytes.Contains(line, []byte(`"compact_boundary"`))
	if !isBoundary && (tf.HasUsage || !bytes.Contains(line, []byte(`"usage"`))) {
		return true
	}
	if !gjson.ValidBytes(line) {
		return true // a torn last line
	}
	rec := NewRecord(line)
	if rec.IsSidechain() {
		return true
	}
	if isBoundary && rec.Type() == "system" && rec.Subtype() == "compact_boundary" {
		tf.Boundary = off
		tf.BoundaryPreTokens = rec.Get("compactMetadata.preTokens").Int()
		return false // nothing before it counts for the current context
	}
	if tf.HasUsage || rec.Type() != "assistant" {
		return true
	}
	u := rec.Usage()
	if !u.Exists() || rec.Get("isApiErrorMessage").Bool() || rec.Get("message.model").Str == "<synthetic>" {
		return true
	}
	tf.Usage = Usage{Input: u.Get("input_tokens").Int(), CacheRead: u.Get("cache_read_input_tokens").Int(),
		CacheCreation: u.Get("cache_creation_input_tokens").Int(), Output: u.Get("output_tokens").Int()}
	tf.HasUsage, tf.UsageOffset = true, off
	tf.Model = strings.Clone(rec.Get("message.model").Str)
	var text strings.Builder
	rec.Content().ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "text" {
			t := b.Get("text").Str
			if len(t) > 4096 {
				t = t[:4096]
			}
			text.WriteString(t)
		}
		return true
	})
	tf.Text = text.String()
	return wantBoundary
}
