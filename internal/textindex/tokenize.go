package textindex

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
	// DocBits is the width of a document number inside a posting pair;
	// a segment holds at most MaxDocs documents.
	DocBits  = 24
	MaxDocs  = 1<<DocBits - 1
	hashMask = ^uint64(1<<DocBits - 1)
)

// lower maps an ASCII byte to its lowercase form when it is a word
// character, and to 0 when it separates words.
var lower = func() (t [128]byte) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return
}()

// wordRune reports whether a non-ASCII rune is part of a word.
func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}

// mix finishes an FNV-1a hash so that its top bits, which the index
// keeps, depend on every byte.
func mix(h uint64) uint64 {
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	return h
}

// tokenizer turns text into word keys.
type tokenizer struct {
	keys []uint64
	buf  []byte
}

// hashWord is the key of a word: its bytes, ASCII letters folded to
// lowercase (OR 0x20, which leaves digits alone and turns '_' into a
// byte no word holds), hashed 8 bytes at a time.
func hashWord(b []byte) uint64 {
	h := uint64(len(b))*0x9e3779b97f4a7c15 ^ fnvOffset
	for len(b) >= 8 {
		v := binary.LittleEndian.Uint64(b) | 0x2020202020202020
		h = bits.RotateLeft64((h^v)*fnvPrime, 29)
		b = b[8:]
	}
	if n := len(b); n > 0 {
		var v uint64
		if cap(b) >= 8 {
			// The bytes after the word are in the same array: load 8
			// and keep the word's.
			v = (binary.LittleEndian.Uint64(b[:8]) | 0x2020202020202020) & (1<<(8*n) - 1)
		} else {
			for k, c := range b {
				v |= uint64(c|0x20) << (8 * k)
			}
		}
		h = (h ^ v) * fnvPrime
	}
	return mix(h) & hashMask
}

// wordByte marks the ASCII bytes that are part of a word (bytes of other
// runes are not: they take the slow path).
var wordByte = func() (t [256]bool) {
	for c := 0; c < 128; c++ {
		t[c] = lower[c] != 0
	}
	return
}()

// isWord reports whether an ASCII byte is part of a word.
func isWord(c byte) bool { return wordByte[c] }

// scan appends the key of every word of text to t.keys. When escaped is
// set, text is the inside of a JSON string as written (\n, \", \uXXXX
// escapes undecoded): escapes are decoded on the fly, so the words are
// those of the decoded string. Words of ASCII letters and digits, nearly
// all of them, are hashed where they lie; a word with other letters is
// first lowercased into a buffer.
func (t *tokenizer) scan(text []byte, escaped bool) {
	keys := t.keys
	for i := 0; i < len(text); {
		c := text[i]
		if isWord(c) {
			j := i + 1
			for j < len(text) && isWord(text[j]) {
				j++
			}
			if j == len(text) || !t.special(text, j, escaped) {
				keys = append(keys, hashWord(text[i:j]))
				i = j
				continue
			}
			t.keys = keys
			i = t.slow(text, i, escaped)
			keys = t.keys
			continue
		}
		if t.special(text, i, escaped) {
			t.keys = keys
			i = t.slow(text, i, escaped)
			keys = t.keys
			continue
		}
		if escaped && c == '\\' {
			i += 2 // \n, \", \\ ...: never part of a word
			continue
		}
		i++
	}
	t.keys = keys
}

// special reports whether text[i] starts a non-ASCII rune or a \u escape.
func (t *tokenizer) special(text []byte, i int, escaped bool) bool {
	return text[i] >= utf8.RuneSelf || escaped && text[i] == '\\' && i+1 < len(text) && text[i+1] == 'u'
}

// slow reads the word that starts at text[i] rune by rune into a
// lowercased buffer and adds its key; it returns where it stopped, past
// at least one rune.
func (t *tokenizer) slow(text []byte, i int, escaped bool) int {
	buf := t.buf[:0]
	start := i
	for i < len(text) {
		c := text[i]
		var r rune
		size := 1
		switch {
		case isWord(c):
			buf = append(buf, lower[c])
			i++
			continue
		case c >= utf8.RuneSelf:
			r, size = utf8.DecodeRune(text[i:])
		case escaped && c == '\\' && i+1 < len(text) && text[i+1] == 'u':
			r, size = unescapeU(text[i:])
		default:
			r = -1
		}
		if r < utf8.RuneSelf && r >= 0 && isWord(byte(r)) {
			buf = append(buf, lower[r])
		} else if r >= utf8.RuneSelf && wordRune(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		} else {
			if i == start {
				i += size // a separator rune or escape: step over it
			}
			break
		}
		i += size
	}
	if len(buf) > 0 {
		t.keys = append(t.keys, hashWord(buf))
	}
	t.buf = buf
	return i
}

// scan calls emit with the key of every word of text (see tokenizer).
func scan(text []byte, escaped bool, emit func(key uint64)) {
	var t tokenizer
	t.scan(text, escaped)
	for _, k := range t.keys {
		emit(k)
	}
}

// unescapeU decodes a \uXXXX escape (and the low half of a surrogate
// pair after it) at the start of b. A malformed escape decodes to
// utf8.RuneError over the bytes it spans.
func unescapeU(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return utf8.RuneError, 2
	}
	if r >= 0xD800 && r < 0xDC00 {
		if lo, ok := hex4(b[6:]); ok && len(b) >= 12 && b[6] == '\\' && lo >= 0xDC00 && lo < 0xE000 {
			return (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000, 12
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// hex4 reads the four hex digits of a \uXXXX escape at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Span is a word of a text and where it is: text[Start:End].
type Span struct {
	Word       string // lowercased
	Start, End int
}

// WordSpans splits decoded text into its words, as the index sees them,
// with their byte ranges: for queries.
func WordSpans(text string) []Span {
	var out []Span
	EachWord(text, func(w []byte, start, end int) {
		out = append(out, Span{Word: string(w), Start: start, End: end})
	})
	return out
}

// EachWord calls fn with each word of decoded text, as WordSpans splits
// it, lowercased, and its byte range, holding none of them: checking a
// candidate document of 60 MB must not keep its millions of words. The
// word's bytes are only valid during the call.
func EachWord(text string, fn func(word []byte, start, end int)) {
	start := -1
	var buf []byte
	for i, r := range text {
		word := r < utf8.RuneSelf && lower[r] != 0 || r >= utf8.RuneSelf && wordRune(r)
		if !word {
			if start >= 0 {
				fn(buf, start, i)
				start = -1
			}
			continue
		}
		if start < 0 {
			start, buf = i, buf[:0]
		}
		if r < utf8.RuneSelf {
			buf = append(buf, lower[r])
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	if start >= 0 {
		fn(buf, start, len(text))
	}
}

// Words is the words of WordSpans without their ranges.
func Words(text string) []string {
	var out []string
	for _, s := range WordSpans(text) {
		out = append(out, s.Word)
	}
	return out
}

// Key is the index key of one word as Words returns it.
func Key(word string) uint64 {
	var k uint64
	scan([]byte(word), false, func(key uint64) { k = key })
	return k
}
