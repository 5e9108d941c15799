package textindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
)

// Segment file layout, little endian:
//
//	magic (8)
//	postings: per key, its documents as delta uvarints (the first as is)
//	dictionary: blocks of up to blockTerms keys, each key as
//	            uvarint(key delta from the previous, the first from the
//	            block's first key) uvarint(postings length)
//	block index: per block: first key, dictionary offset, postings offset (3 x 8)
//	documents: docSize bytes each
//	footer (footerSize): offsets and counts, CRC-32C of the block index
//	            and of the footer, magic
const (
	magic      = "CCMTIX01"
	blockTerms = 128
	footerSize = 7*8 + 4 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt marks a segment that fails its checks: the caller rebuilds.
var ErrCorrupt = errors.New("index segment is damaged")

func corrupt(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, a...))
}

type footer struct {
	dictOff, blockOff, docOff uint64
	blocks, docs, keys        uint64
	blockCRC                  uint32
	textBytes                 uint64
}

// WriteTo writes the segment. Reset the builder before adding more.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	sw := newSegWriter(w)
	pairs := b.pairs
	if len(pairs) > 0 {
		if cap(b.tmp) < len(pairs) {
			b.tmp = make([]uint64, len(pairs))
		}
		sorted := radixSort(pairs, b.tmp[:len(pairs)])
		if &sorted[0] != &pairs[0] {
			b.pairs, b.tmp = b.tmp, b.pairs
		}
		pairs = sorted
	}
	var docs []uint32
	for i := 0; i < len(pairs); {
		key := pairs[i] & hashMask
		docs = docs[:0]
		j := i
		for ; j < len(pairs) && pairs[j]&hashMask == key; j++ {
			docs = append(docs, uint32(pairs[j]&^hashMask))
		}
		sw.key(key, docs)
		i = j
	}
	return sw.finish(b.docs, b.text)
}

// segWriter writes a segment: keys in ascending order with their
// documents, then the documents' metadata.
type segWriter struct {
	bw      *bufio.Writer
	cw      *countWriter
	blocks  []uint64 // 3 per block
	dict    []byte
	prevKey uint64
	keys    uint64
	vb      [binary.MaxVarintLen64]byte
}

func newSegWriter(w io.Writer) *segWriter {
	bw := bufio.NewWriterSize(w, 1<<20)
	sw := &segWriter{bw: bw, cw: &countWriter{w: bw}}
	sw.cw.Write([]byte(magic))
	return sw
}

// key writes one key's ascending documents.
func (sw *segWriter) key(key uint64, docs []uint32) {
	if len(docs) == 0 {
		return
	}
	start := uint64(sw.cw.n)
	prev := uint32(0)
	for _, d := range docs {
		n := binary.PutUvarint(sw.vb[:], uint64(d-prev))
		sw.cw.Write(sw.vb[:n])
		prev = d
	}
	if sw.keys%blockTerms == 0 {
		sw.blocks = append(sw.blocks, key, uint64(len(sw.dict)), start-8)
		sw.prevKey = key
	}
	sw.dict = binary.AppendUvarint(sw.dict, key-sw.prevKey)
	sw.dict = binary.AppendUvarint(sw.dict, uint64(sw.cw.n)-start)
	sw.prevKey = key
	sw.keys++
}

// finish writes the dictionary, block index, documents and footer.
func (sw *segWriter) finish(docs []Doc, text int64) (int64, error) {
	cw := sw.cw
	var f footer
	f.dictOff = uint64(cw.n)
	cw.Write(sw.dict)
	f.blockOff = uint64(cw.n)
	bi := make([]byte, 0, 8*len(sw.blocks))
	for _, v := range sw.blocks {
		bi = binary.LittleEndian.AppendUint64(bi, v)
	}
	cw.Write(bi)
	f.blockCRC = crc32.Checksum(bi, castagnoli)
	f.docOff = uint64(cw.n)
	var db [docSize]byte
	for i := range docs {
		docs[i].put(db[:])
		cw.Write(db[:])
	}
	f.blocks, f.docs, f.keys, f.textBytes = uint64(len(sw.blocks)/3), uint64(len(docs)), sw.keys, uint64(text)
	cw.Write(f.encode())
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, sw.bw.Flush()
}

func (f *footer) encode() []byte {
	out := make([]byte, 0, footerSize)
	for _, v := range []uint64{f.dictOff, f.blockOff, f.docOff, f.blocks, f.docs, f.keys, f.textBytes} {
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	out = binary.LittleEndian.AppendUint32(out, f.blockCRC)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	return append(out, magic...)
}

func decodeFooter(b []byte, size uint64) (footer, error) {
	if len(b) != footerSize || string(b[footerSize-8:]) != magic {
		return footer{}, corrupt("no footer")
	}
	if crc32.Checksum(b[:60], castagnoli) != binary.LittleEndian.Uint32(b[60:]) {
		return footer{}, corrupt("footer checksum")
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	f := footer{dictOff: u(0), blockOff: u(1), docOff: u(2), blocks: u(3), docs: u(4), keys: u(5), textBytes: u(6),
		blockCRC: binary.LittleEndian.Uint32(b[56:])}
	end := size - footerSize
	if f.dictOff < 8 || f.dictOff > f.blockOff || f.blockOff > f.docOff || f.docOff > end ||
		f.blocks*24 != f.docOff-f.blockOff || f.docs*docSize != end-f.docOff || f.docs > MaxDocs+1 ||
		f.blocks*blockTerms < f.keys || (f.keys > 0 && (f.blocks-1)*blockTerms >= f.keys) {
		return footer{}, corrupt("footer out of bounds")
	}
	return f, nil
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// Segment is an open segment file. Its block index is in memory; the
// postings, dictionary and documents are read on demand.
type Segment struct {
	r      io.ReaderAt
	f      footer
	blocks []uint64 // 3 per block
}

// Open reads a segment's footer and block index and checks them.
func Open(r io.ReaderAt, size int64) (*Segment, error) {
	if size < 8+footerSize {
		return nil, corrupt("too short")
	}
	fb := make([]byte, footerSize)
	if _, err := r.ReadAt(fb, size-footerSize); err != nil {
		return nil, err
	}
	f, err := decodeFooter(fb, uint64(size))
	if err != nil {
		return nil, err
	}
	bi := make([]byte, f.docOff-f.blockOff)
	if _, err := r.ReadAt(bi, int64(f.blockOff)); err != nil {
		return nil, err
	}
	if crc32.Checksum(bi, castagnoli) != f.blockCRC {
		return nil, corrupt("block index checksum")
	}
	s := &Segment{r: r, f: f, blocks: make([]uint64, 3*f.blocks)}
	for i := range s.blocks {
		s.blocks[i] = binary.LittleEndian.Uint64(bi[8*i:])
	}
	for i := uint64(0); i < f.blocks; i++ {
		if s.blocks[3*i+1] > f.blockOff-f.dictOff || s.blocks[3*i+2] > f.dictOff-8 || (i > 0 && s.blocks[3*i] <= s.blocks[3*i-3]) {
			return nil, corrupt("block index out of order")
		}
	}
	return s, nil
}

// Docs is the number of documents in the segment.
func (s *Segment) Docs() int { return int(s.f.docs) }

// Keys is the number of distinct word keys in the segment.
func (s *Segment) Keys() int { return int(s.f.keys) }

// TextBytes is the number of text bytes the segment's documents held.
func (s *Segment) TextBytes() int64 { return int64(s.f.textBytes) }

// Doc reads the metadata of document i.
func (s *Segment) Doc(i uint32) (Doc, error) {
	if uint64(i) >= s.f.docs {
		return Doc{}, corrupt("document %d of %d", i, s.f.docs)
	}
	var b [docSize]byte
	if _, err := s.r.ReadAt(b[:], int64(s.f.docOff+uint64(i)*docSize)); err != nil {
		return Doc{}, err
	}
	return getDoc(b[:]), nil
}

// AllDocs calls fn with every document in order, reading the table in
// large pieces.
func (s *Segment) AllDocs(fn func(i uint32, d Doc) bool) error {
	const per = 2048
	buf := make([]byte, per*docSize)
	for i := uint64(0); i < s.f.docs; i += per {
		n := min(per, s.f.docs-i)
		if _, err := s.r.ReadAt(buf[:n*docSize], int64(s.f.docOff+i*docSize)); err != nil {
			return err
		}
		for j := uint64(0); j < n; j++ {
			if !fn(uint32(i+j), getDoc(buf[j*docSize:])) {
				return nil
			}
		}
	}
	return nil
}

// postings finds key's postings: their offset and length in the file,
// ok false when the segment does not hold the key.
func (s *Segment) postings(key uint64) (off, n uint64, ok bool, err error) {
	nb := int(s.f.blocks)
	bi := sort.Search(nb, func(i int) bool { return s.blocks[3*i] > key }) - 1
	if bi < 0 {
		return 0, 0, false, nil
	}
	dictStart := s.blocks[3*bi+1]
	dictEnd := s.f.blockOff - s.f.dictOff
	if bi+1 < nb {
		dictEnd = s.blocks[3*bi+4]
	}
	if dictEnd < dictStart || dictEnd-dictStart > blockTerms*2*binary.MaxVarintLen64 {
		return 0, 0, false, corrupt("dictionary block size")
	}
	buf := make([]byte, dictEnd-dictStart)
	if _, err := s.r.ReadAt(buf, int64(s.f.dictOff+dictStart)); err != nil {
		return 0, 0, false, err
	}
	k, post := s.blocks[3*bi], s.blocks[3*bi+2]
	for len(buf) > 0 {
		d, n1 := binary.Uvarint(buf)
		if n1 <= 0 {
			return 0, 0, false, corrupt("dictionary varint")
		}
		l, n2 := binary.Uvarint(buf[n1:])
		if n2 <= 0 {
			return 0, 0, false, corrupt("dictionary varint")
		}
		buf = buf[n1+n2:]
		k += d
		if k == key {
			if post+l > s.f.dictOff-8 {
				return 0, 0, false, corrupt("postings out of bounds")
			}
			return 8 + post, l, true, nil
		}
		if k > key {
			return 0, 0, false, nil
		}
		post += l
	}
	return 0, 0, false, nil
}

// PostingsSize is the encoded size of key's document list (0 when the
// segment does not hold it): a cheap measure of how common the word is.
func (s *Segment) PostingsSize(key uint64) (int, error) {
	_, n, _, err := s.postings(key)
	return int(n), err
}

// Lookup returns the ascending documents that hold key, appended to dst.
func (s *Segment) Lookup(key uint64, dst []uint32) ([]uint32, error) {
	off, n, ok, err := s.postings(key)
	if err != nil || !ok {
		return dst, err
	}
	buf := make([]byte, n)
	if _, err := s.r.ReadAt(buf, int64(off)); err != nil {
		return dst, err
	}
	var doc uint64
	first := true
	for len(buf) > 0 {
		d, m := binary.Uvarint(buf)
		if m <= 0 || (!first && d == 0) {
			return dst, corrupt("postings varint")
		}
		buf = buf[m:]
		doc += d
		first = false
		if doc >= s.f.docs {
			return dst, corrupt("posting past the last document")
		}
		dst = append(dst, uint32(doc))
	}
	return dst, nil
}

// Intersect keeps in a the documents also in b (both ascending).
func Intersect(a, b []uint32) []uint32 {
	out := a[:0]
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j] == x {
			out = append(out, x)
		}
	}
	return out
}
