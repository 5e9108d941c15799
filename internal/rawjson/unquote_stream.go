package rawjson

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotString is returned by UnquoteTo for input that is not one
// well-formed JSON string.
var ErrNotString = errors.New("not a well-formed JSON string")

// UnquoteTo decodes the raw JSON string read from r (quotes included,
// nothing after the closing quote but white space) and writes the text it
// encodes to w, as Unquote does, in bounded memory: content stored from a
// transcript line can be larger than is sensible to hold twice.
func UnquoteTo(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := skipSpace(br); err != nil {
		return notString(err)
	}
	if c, err := br.ReadByte(); err != nil || c != '"' {
		return notString(err)
	}
	for {
		// Copy the run up to the next quote or backslash whole.
		if _, err := br.Peek(1); err != nil {
			return notString(err)
		}
		buf, _ := br.Peek(br.Buffered())
		i := 0
		for i < len(buf) && buf[i] != '"' && buf[i] != '\\' {
			i++
		}
		if _, err := bw.Write(buf[:i]); err != nil {
			return err // the reader is gone: stop reading
		}
		br.Discard(i)
		if i == len(buf) {
			continue
		}
		c, _ := br.ReadByte()
		if c == '\\' {
			if err := unescape(br, bw); err != nil {
				return err
			}
			continue
		}
		// The closing quote: only white space may follow.
		if err := skipSpace(br); err != io.EOF {
			return notString(err)
		}
		return bw.Flush()
	}
}

// unescape decodes the escape after a backslash (already read).
func unescape(br *bufio.Reader, bw *bufio.Writer) error {
	c, err := br.ReadByte()
	if err != nil {
		return notString(err)
	}
	switch c {
	case '"', '\\', '/':
		bw.WriteByte(c)
	case 'n':
		bw.WriteByte('\n')
	case 't':
		bw.WriteByte('\t')
	case 'r':
		bw.WriteByte('\r')
	case 'b':
		bw.WriteByte('\b')
	case 'f':
		bw.WriteByte('\f')
	case 'u':
		r, err := readHex4(br)
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			// A pair is \uD8xx\uDCxx; a lone half is U+FFFD, as Unquote has it.
			r2 := rune(-1)
			if next, _ := br.Peek(6); len(next) == 6 && next[0] == '\\' && next[1] == 'u' {
				if lo, n := hex4(string(next[2:])); n > 0 && utf16.DecodeRune(r, lo) != utf8.RuneError {
					r2 = lo
					br.Discard(6)
				}
			}
			r = utf16.DecodeRune(r, r2)
		}
		var b [utf8.UTFMax]byte
		bw.Write(b[:utf8.EncodeRune(b[:], r)])
	default:
		return ErrNotString
	}
	return nil
}

func readHex4(br *bufio.Reader) (rune, error) {
	b, err := br.Peek(4)
	if err != nil {
		return 0, notString(err)
	}
	r, n := hex4(string(b))
	if n == 0 {
		return 0, ErrNotString
	}
	br.Discard(4)
	return r, nil
}

func skipSpace(br *bufio.Reader) error {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return err
		}
		if !IsSpace(c) {
			return br.UnreadByte()
		}
	}
}

// notString words a read error inside the string: the end of the input
// there means it was cut off.
func notString(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrNotString
	}
	return err
}
