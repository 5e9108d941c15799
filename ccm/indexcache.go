package ccm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"time"

	"ccm/internal/fsutil"
)

// packs/index.cache holds the replayed pack index in binary, as of a byte
// offset of the log, so that reading a store of 100,000 blobs does not
// parse 35 MB of JSON lines ("ccm cache stats" and a prune dry run must
// take well under 0.3 s). It is only a cache: the log stays the truth. A
// cache is used only when it names the log's inode, its offset is within
// the log, and the CRC-32C of the log up to that offset matches (the log
// is append-only, and a repack replaces it by rename); anything else,
// including a damaged cache, is ignored and the log replayed. It is
// rewritten (temp file, rename, no fsync: losing it costs one replay)
// when more than cacheEvery bytes of log were replayed past it.
const indexCacheName = "index.cache"

// cacheEvery is a variable so that tests can write caches of small logs.
var cacheEvery int64 = 4 << 20

var indexCacheMagic = []byte("CCMIDXC2")

func (s *Store) indexCachePath() string { return s.path(packsDir, indexCacheName) }

// readIndexCache returns the cached index for the log f (inode ino, size
// bytes), or nil.
func (s *Store) readIndexCache(f *os.File, ino uint64, size int64) *packIndex {
	b, err := os.ReadFile(s.indexCachePath())
	if err != nil || len(b) < len(indexCacheMagic)+4 || !bytes.HasPrefix(b, indexCacheMagic) {
		return nil
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if frameCRC(body) != sum {
		return nil
	}
	// Strings are cut from one copy of the whole cache: no allocation per
	// string (half a million at 100,000 blobs).
	d := &decoder{b: body[len(indexCacheMagic):], s: string(body[len(indexCacheMagic):])}
	cIno, off, logCRC := d.uint(), int64(d.uint()), uint32(d.uint())
	if d.err != nil || cIno != ino || off > size || off <= 0 {
		return nil
	}
	if sum, err := prefixCRC(f, off); err != nil || sum != logCRC {
		return nil
	}
	idx := &packIndex{ino: ino, parsed: off}
	if !idx.decodeCache(d) {
		return nil
	}
	return idx
}

// decodeCache reads what follows the cache's header into idx. It reports
// false for anything it cannot use; it never panics, whatever the bytes
// (FuzzIndexCache).
func (idx *packIndex) decodeCache(d *decoder) bool {
	limit := uint64(len(d.b))
	idx.lines = int(min(d.uint(), limit))
	nbad := d.uint()
	for i := uint64(0); i < nbad && d.err == nil; i++ {
		idx.bad = append(idx.bad, badIndexLine{line: int(min(d.uint(), limit)), err: d.str()})
	}
	np := d.uint()
	if d.err != nil || np > limit {
		return false
	}
	for i := uint64(0); i < np && d.err == nil; i++ {
		if id := d.str(); !validPackID(id) || idx.intern(id) != int32(i) {
			return false
		}
	}
	n := d.uint()
	if d.err != nil || n > limit {
		return false
	}
	idx.entries = make(map[Key]*packEntry, n)
	es := make([]packEntry, n)
	for i := range es {
		if d.err != nil {
			break
		}
		e := &es[i]
		d.entry(e, idx.packIDs)
		idx.entries[e.meta.Key] = e
	}
	return d.err == nil
}

// writeIndexCache saves idx, which replayed f up to idx.parsed. Errors are
// ignored: a read-only store just replays its log each time.
func (s *Store) writeIndexCache(f *os.File, idx *packIndex) {
	sum, err := prefixCRC(f, idx.parsed)
	if err != nil {
		return
	}
	b := append([]byte(nil), indexCacheMagic...)
	b = binary.AppendUvarint(b, idx.ino)
	b = binary.AppendUvarint(b, uint64(idx.parsed))
	b = binary.AppendUvarint(b, uint64(sum))
	b = binary.AppendUvarint(b, uint64(idx.lines))
	b = binary.AppendUvarint(b, uint64(len(idx.bad)))
	for _, l := range idx.bad {
		b = binary.AppendUvarint(b, uint64(l.line))
		b = appendCacheStr(b, l.err)
	}
	b = binary.AppendUvarint(b, uint64(len(idx.packIDs)))
	for _, id := range idx.packIDs {
		b = appendCacheStr(b, id)
	}
	b = binary.AppendUvarint(b, uint64(len(idx.entries)))
	prefixes := make([]uint64, 0, len(idx.entries))
	for k, e := range idx.entries {
		b = appendEntry(b, e)
		prefixes = append(prefixes, keyPrefix(k))
	}
	// The key table: sorted key prefixes, then their count. A Put reads
	// only this (see packPresence) to learn that content is not in a pack.
	slices.Sort(prefixes)
	for _, p := range prefixes {
		b = binary.BigEndian.AppendUint64(b, p)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(prefixes)))
	b = binary.LittleEndian.AppendUint32(b, frameCRC(b))
	_ = fsutil.WriteFileUnsynced(s.indexCachePath(), fsutil.FileMode, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// prefixCRC is the CRC-32C of the first n bytes of f, read 1 MB at a time.
func prefixCRC(f *os.File, n int64) (uint32, error) {
	buf := make([]byte, 1<<20)
	var sum uint32
	for off := int64(0); off < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		sum = crc32.Update(sum, castagnoli, buf[:k])
		off += int64(k)
		if err != nil && (!errors.Is(err, io.EOF) || off < n) {
			return 0, err
		}
	}
	return sum, nil
}

func appendCacheStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.AppendVarint(b, nanos(t))
}

func appendEntry(b []byte, e *packEntry) []byte {
	m := &e.meta
	b = appendCacheStr(b, string(m.Key))
	b = binary.AppendUvarint(b, uint64(e.loc.slot))
	b = binary.AppendUvarint(b, uint64(e.loc.off))
	b = binary.AppendUvarint(b, uint64(e.loc.clen))
	b = appendCacheStr(b, string(e.loc.codec))
	b = binary.AppendUvarint(b, uint64(e.loc.crc))
	b = appendTime(b, m.CreatedAt)
	b = appendTime(b, m.LastAccessAt)
	b = binary.AppendUvarint(b, uint64(m.AccessCount))
	b = binary.AppendUvarint(b, uint64(m.BytesUncompressed))
	b = binary.AppendUvarint(b, uint64(m.Lines))
	b = binary.AppendUvarint(b, uint64(m.Pinned.Level))
	b = appendCacheStr(b, m.Pinned.Reason)
	b = appendTime(b, m.Pinned.PinnedAt)
	src := &m.Source
	for _, f := range []string{src.ToolName, src.SessionPath, src.FilePath, src.Command, src.Pattern,
		src.Description, src.Cwd, src.MediaType, src.Type, string(src.extra)} {
		b = appendCacheStr(b, f)
	}
	return binary.AppendVarint(b, int64(src.ExitCode))
}

// decoder reads what appendEntry wrote; the first error sticks.
type decoder struct {
	b   []byte
	s   string // the same bytes as b at the start, as a string
	err error
}

// pos is how far the decoder has read.
func (d *decoder) pos() int { return len(d.s) - len(d.b) }

var errCacheShort = errors.New("index cache: short")

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = errCacheShort, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = errCacheShort, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errCacheShort, nil
		return ""
	}
	if n == 0 {
		return ""
	}
	p := d.pos()
	d.b = d.b[n:]
	return d.s[p : p+int(n)]
}

func (d *decoder) time() time.Time {
	n := d.int()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (d *decoder) entry(e *packEntry, packIDs []string) {
	m := &e.meta
	m.Key = Key(d.str())
	slot := d.uint()
	if slot >= uint64(len(packIDs)) {
		d.err = errCacheShort
		return
	}
	e.loc.pack, e.loc.slot = packIDs[slot], int32(slot)
	e.loc.off = int64(d.uint())
	e.loc.clen = int64(d.uint())
	e.loc.codec = Compression(d.str())
	e.loc.crc = uint32(d.uint())
	m.CreatedAt = d.time()
	m.LastAccessAt = d.time()
	m.AccessCount = int64(d.uint())
	m.BytesUncompressed = int64(d.uint())
	m.Lines = int64(d.uint())
	m.Pinned.Level = PinLevel(d.uint())
	m.Pinned.Reason = d.str()
	m.Pinned.PinnedAt = d.time()
	src := &m.Source
	for _, f := range []*string{&src.ToolName, &src.SessionPath, &src.FilePath, &src.Command, &src.Pattern,
		&src.Description, &src.Cwd, &src.MediaType, &src.Type} {
		*f = d.str()
	}
	src.extra = extras(d.str())
	src.ExitCode = int(d.int())
	m.BytesCompressed, m.Compression = e.loc.clen, string(e.loc.codec)
	// Keys were checked when the log was replayed, and the cache's CRC
	// covers it; what could redirect a read is checked again anyway.
	if len(m.Key) < 8 || m.Pinned.Level > PinHard {
		d.err = errCacheShort
	}
}

// readKeyTable reads the header and key table of the index cache without
// the rest: the log inode and offset it describes, and the sorted key
// prefixes. ok is false when there is no usable table.
func (s *Store) readKeyTable() (ino uint64, off int64, table []uint64, ok bool) {
	f, err := os.Open(s.indexCachePath())
	if err != nil {
		return 0, 0, nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 64 {
		return 0, 0, nil, false
	}
	head := make([]byte, 64)
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.HasPrefix(head, indexCacheMagic) {
		return 0, 0, nil, false
	}
	d := &decoder{b: head[len(indexCacheMagic):]}
	ino, off = d.uint(), int64(d.uint())
	tail := make([]byte, 12)
	if _, err := f.ReadAt(tail, fi.Size()-12); err != nil || d.err != nil {
		return 0, 0, nil, false
	}
	n := int64(binary.LittleEndian.Uint64(tail))
	start := fi.Size() - 12 - 8*n
	if n < 0 || n > fi.Size()/8 || start < 0 {
		return 0, 0, nil, false
	}
	raw := make([]byte, 8*n)
	if _, err := f.ReadAt(raw, start); err != nil {
		return 0, 0, nil, false
	}
	table = make([]uint64, n)
	for i := range table {
		table[i] = binary.BigEndian.Uint64(raw[8*i:])
	}
	return ino, off, table, slices.IsSorted(table)
}
