package textindex

import (
	"encoding/binary"
	"errors"
)

// Kinds of document, a bit each, so that a query can ask for several.
const (
	KindPrompt uint8 = 1 << iota // a user's prompt
	KindReply                    // an assistant's text
	KindInput                    // a tool call's input (command, path, pattern)
	KindOutput                   // a tool's output, stored content included
)

// Doc is the metadata of one document: where its text is and what it is.
// The index does not interpret File, Off and Len: the caller uses them to
// read the document back.
type Doc struct {
	File uint32 // the caller's number for the file the document is in
	Line uint32 // 1-based line (record) number in that file
	Off  uint64 // byte offset of the document in the file
	Len  uint32 // its length in bytes
	Time uint32 // Unix seconds; 0 when unknown
	Tool uint16 // the caller's number for the tool's name; 0 for none
	Kind uint8  // Kind* bits
	Sub  uint8  // the caller's use
}

// docSize is the encoded size of a Doc.
const docSize = 32

func (d *Doc) put(b []byte) {
	binary.LittleEndian.PutUint32(b[0:], d.File)
	binary.LittleEndian.PutUint32(b[4:], d.Line)
	binary.LittleEndian.PutUint64(b[8:], d.Off)
	binary.LittleEndian.PutUint32(b[16:], d.Len)
	binary.LittleEndian.PutUint32(b[20:], d.Time)
	binary.LittleEndian.PutUint16(b[24:], d.Tool)
	b[26], b[27] = d.Kind, d.Sub
	clear(b[28:32])
}

func getDoc(b []byte) Doc {
	return Doc{File: binary.LittleEndian.Uint32(b[0:]), Line: binary.LittleEndian.Uint32(b[4:]),
		Off: binary.LittleEndian.Uint64(b[8:]), Len: binary.LittleEndian.Uint32(b[16:]),
		Time: binary.LittleEndian.Uint32(b[20:]), Tool: binary.LittleEndian.Uint16(b[24:]),
		Kind: b[26], Sub: b[27]}
}

// ErrFull is returned by Start when a builder holds MaxDocs documents:
// write it out and start another.
var ErrFull = errors.New("textindex: segment is full")

// Builder collects documents and their words for one segment. Start a
// document, add its text in any number of pieces, start the next.
type Builder struct {
	docs  []Doc
	pairs []uint64 // key | doc, in the order added
	tmp   []uint64 // the radix sort's other half
	cur   uint64
	set   wordSet
	tok   tokenizer
	text  int64
}

// NewBuilder returns an empty builder that expects about pairs (word,
// document) pairs before it is written: their room is taken at once.
func NewBuilder(pairs int) *Builder {
	b := &Builder{pairs: make([]uint64, 0, pairs)}
	b.set.init(1024)
	return b
}

// Start begins a new document; the text added next belongs to it.
func (b *Builder) Start(d Doc) error {
	if len(b.docs) >= MaxDocs {
		return ErrFull
	}
	b.cur = uint64(len(b.docs))
	b.docs = append(b.docs, d)
	b.set.reset()
	return nil
}

// Amend replaces the metadata of the current document (its length, once
// known).
func (b *Builder) Amend(d Doc) {
	if len(b.docs) > 0 {
		b.docs[len(b.docs)-1] = d
	}
}

// AddText adds decoded text to the current document. Each piece added
// ends its last word.
func (b *Builder) AddText(text []byte) { b.add(text, false) }

// AddJSON adds the inside of a JSON string as written, escapes and all,
// to the current document. It ends the string's last word.
func (b *Builder) AddJSON(raw []byte) {
	b.add(raw, true)
}

// piece is how much text is tokenized before its keys are added, so that
// the keys of a 60 MB line never sit in memory at once.
const piece = 64 << 10

func (b *Builder) add(text []byte, escaped bool) {
	b.text += int64(len(text))
	for len(text) > 0 {
		n := min(len(text), piece)
		if n < len(text) {
			// Cut after a space, which is in no word and no escape.
			if j := lastIndexByte(text[max(0, n-4096):n], ' '); j >= 0 {
				n = max(0, n-4096) + j + 1
			}
		}
		b.tok.scan(text[:n], escaped)
		text = text[n:]
		b.flushKeys()
	}
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func (b *Builder) flushKeys() {
	for _, k := range b.tok.keys {
		if b.set.add(k) {
			b.pairs = append(b.pairs, k|b.cur)
		}
	}
	b.tok.keys = b.tok.keys[:0]
}

// Docs is the number of documents so far.
func (b *Builder) Docs() int { return len(b.docs) }

// TextBytes is the number of text bytes added so far.
func (b *Builder) TextBytes() int64 { return b.text }

// Pairs is the number of (word, document) pairs so far: the builder's
// memory is about 16 bytes per pair while it writes.
func (b *Builder) Pairs() int { return len(b.pairs) }

// wordSet is the set of keys of the current document, an open-addressed
// table that a generation number clears in O(1).
type wordSet struct {
	keys []uint64
	gens []uint32
	gen  uint32
	n    int
}

func (s *wordSet) init(size int) {
	s.keys, s.gens, s.gen, s.n = make([]uint64, size), make([]uint32, size), 1, 0
}

func (s *wordSet) reset() {
	s.gen++
	s.n = 0
	if s.gen == 0 { // wrapped: clear for real
		clear(s.gens)
		s.gen = 1
	}
	if len(s.keys) > 1<<20 { // a huge document grew it: shrink back
		s.init(1024)
	}
}

// add reports whether k was new to the set.
func (s *wordSet) add(k uint64) bool {
	if 2*(s.n+1) > len(s.keys) {
		s.grow()
	}
	mask := uint64(len(s.keys) - 1)
	for i := (k >> DocBits) & mask; ; i = (i + 1) & mask {
		if s.gens[i] != s.gen {
			s.keys[i], s.gens[i] = k, s.gen
			s.n++
			return true
		}
		if s.keys[i] == k {
			return false
		}
	}
}

func (s *wordSet) grow() {
	old := *s
	s.keys, s.gens = make([]uint64, 2*len(old.keys)), make([]uint32, 2*len(old.keys))
	s.n = 0
	mask := uint64(len(s.keys) - 1)
	for i, g := range old.gens {
		if g != old.gen {
			continue
		}
		k := old.keys[i]
		j := (k >> DocBits) & mask
		for s.gens[j] == s.gen {
			j = (j + 1) & mask
		}
		s.keys[j], s.gens[j] = k, s.gen
		s.n++
	}
}

// radixSort orders pairs by their key bits (the top 40) in five stable
// byte passes, so that each key's documents stay ascending.
func radixSort(a, tmp []uint64) []uint64 {
	var counts [5][256]int
	for _, v := range a {
		for p := 0; p < 5; p++ {
			counts[p][byte(v>>(DocBits+8*p))]++
		}
	}
	for p := 0; p < 5; p++ {
		c := &counts[p]
		if c[byte(a[0]>>(DocBits+8*p))] == len(a) {
			continue // every pair has the same byte here
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		shift := DocBits + 8*p
		for _, v := range a {
			b := byte(v >> shift)
			tmp[c[b]] = v
			c[b]++
		}
		a, tmp = tmp, a
	}
	return a
}

// Reset empties the builder for the next segment, keeping its memory.
func (b *Builder) Reset() {
	b.docs = b.docs[:0]
	b.pairs = b.pairs[:0]
	b.text = 0
	b.set.reset()
}
