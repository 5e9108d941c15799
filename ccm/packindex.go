package ccm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
)

// The pack index (packs/index.jsonl) is an append-only log, one JSON
// object a line, of what happened to the blobs that live in packs:
//
//	put     a blob's frame: pack, offset, length, codec, CRC-32C of the
//	        frame, uncompressed size, lines, creation time, pin, source
//	        (also after a repack moved it, or a corrupt copy was replaced)
//	seen    the same content stored again: last access, pin raised
//	access  a retrieval: last access, access count + 1
//	pin     the pin set exactly (ccm pin / unpin)
//	del     the blob is gone (prune); its frame is dead until a repack
//
// Readers replay the log into one entry per key. Appends happen under
// meta.lock, one write(2) per batch, and a writer first ends a torn last
// line (a crash mid-append) with a newline, so a torn line stays a single
// bad line that readers skip and `ccm cache verify` reports. A reader
// ignores a last line without its newline (an append in progress). Times
// are Unix nanoseconds. A repack rewrites the log as one put line per
// live blob (temp file, fsync, rename), under the exclusive store lock.
const (
	packsDir      = "packs"
	packIndexName = "index.jsonl"
	packExt       = ".pack"
)

// packLoc is where a blob's frame is.
type packLoc struct {
	pack  string // pack id: the file is packs/<id>.pack
	off   int64
	clen  int64 // frame length
	codec Compression
	crc   uint32 // CRC-32C of the frame
	slot  int32  // index of pack in packIndex.packIDs (set by the index)
}

// packEntry is a blob in a pack: where, and its metadata.
type packEntry struct {
	loc  packLoc
	meta Meta
}

// badIndexLine is a log line that could not be used.
type badIndexLine struct {
	line int
	err  string
}

// packIndex is the replayed log and how far it has been read.
type packIndex struct {
	entries  map[Key]*packEntry
	packIDs  []string         // every pack id the index named, by slot
	slotOf   map[string]int32 // the inverse of packIDs
	bad      []badIndexLine
	lines    int
	ino      uint64
	parsed   int64 // bytes replayed (up to the last complete line)
	cachedAt int64 // the offset of the latest index.cache read or written
}

func (s *Store) packIndexPath() string { return s.path(packsDir, packIndexName) }

// packPath returns the file of pack id. Ids come from the index, so they
// are checked before they become paths.
func (s *Store) packPath(id string) string { return s.path(packsDir, id+packExt) }

func validPackID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

// loadIndexLocked brings s.idx up to date with the log: only the bytes
// appended since the last call are read, the whole log again when it was
// replaced (a repack). The caller holds s.idxMu.
func (s *Store) loadIndexLocked() error {
	f, err := fsutil.OpenPrivate(s.packIndexPath(), os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsNotDir) {
			s.idx = &packIndex{entries: map[Key]*packEntry{}}
			return nil
		}
		return fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	st, err := fsutil.Fstat(f)
	if err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	if !st.Mode.IsRegular() {
		return fmt.Errorf("pack index %s is not a regular file", s.packIndexPath())
	}
	idx := s.idx
	if idx == nil || idx.ino != st.ID.Ino || st.Size < idx.parsed {
		idx = s.readIndexCache(f, st.ID.Ino, st.Size)
		if idx == nil {
			idx = &packIndex{entries: map[Key]*packEntry{}, ino: st.ID.Ino}
		}
		idx.cachedAt = idx.parsed
	}
	if st.Size == idx.parsed {
		s.idx = idx
		return nil
	}
	buf := make([]byte, st.Size-idx.parsed)
	n, err := f.ReadAt(buf, idx.parsed)
	if err != nil && err != io.EOF {
		return fmt.Errorf("pack index: %w", err)
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		s.idx = idx
		return nil
	}
	idx.replay(buf[:end+1])
	idx.parsed += int64(end + 1)
	s.idx = idx
	if idx.parsed-idx.cachedAt > cacheEvery {
		s.writeIndexCache(f, idx)
		idx.cachedAt = idx.parsed
	}
	return nil
}

// replay applies complete log lines. A long log (a whole store read at
// once) is parsed on every core, then applied in order: at 100,000 blobs
// parsing is most of "ccm cache stats".
func (idx *packIndex) replay(b []byte) {
	parts := splitLines(b, runtime.GOMAXPROCS(0), 1<<20)
	ops := make([][]parsedLine, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ops[i] = parseLines(part)
		}()
	}
	wg.Wait()
	for _, part := range ops {
		for _, pl := range part {
			idx.lines++
			err := pl.err
			if err == nil && !pl.blank {
				err = idx.apply(&pl.op)
			}
			if err != nil && len(idx.bad) < 1000 {
				idx.bad = append(idx.bad, badIndexLine{idx.lines, err.Error()})
			}
		}
	}
}

// parsedLine is one log line, decoded.
type parsedLine struct {
	op    indexOp
	err   error
	blank bool
}

func parseLines(b []byte) []parsedLine {
	out := make([]parsedLine, 0, bytes.Count(b, []byte{'\n'}))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b[:i]
		b = b[i+1:]
		var pl parsedLine
		if len(line) == 0 {
			pl.blank = true
		} else {
			pl.err = parseOp(line, &pl.op)
		}
		out = append(out, pl)
	}
	return out
}

// splitLines cuts b (whole lines) into at most n parts of whole lines, one
// part when b is shorter than min.
func splitLines(b []byte, n, min int) [][]byte {
	if n <= 1 || len(b) < min {
		return [][]byte{b}
	}
	var out [][]byte
	for n > 1 && len(b) > 0 {
		cut := len(b) / n
		j := bytes.IndexByte(b[cut:], '\n')
		if j < 0 {
			break
		}
		out = append(out, b[:cut+j+1])
		b = b[cut+j+1:]
		n--
	}
	if len(b) > 0 {
		out = append(out, b)
	}
	return out
}

// indexOp is one decoded log line.
type indexOp struct {
	op     string
	key    Key
	t      time.Time
	loc    packLoc
	size   int64
	lines  int64
	access time.Time // put lines of a snapshot
	count  int64
	pin    PinInfo
	hasPin bool
	src    Source
	why    string
}

func nsTime(v gjson.Result) time.Time {
	if v.Int() == 0 {
		return time.Time{}
	}
	return time.Unix(0, v.Int())
}

// parseOp decodes one log line.
func parseOp(line []byte, op *indexOp) error {
	if !gjson.ValidBytes(line) {
		return errors.New("not JSON (a torn write?)")
	}
	var err error
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "op":
			op.op = v.Str
		case "key":
			op.key, err = ParseKey(v.Str)
		case "t":
			op.t = nsTime(v)
		case "pack":
			op.loc.pack = v.Str
			if !validPackID(v.Str) {
				err = fmt.Errorf("invalid pack id %s", quoteShort(v.Str))
			}
		case "off":
			op.loc.off = v.Int()
		case "len":
			op.loc.clen = v.Int()
		case "codec":
			op.loc.codec = Compression(v.Str)
		case "crc":
			op.loc.crc = uint32(v.Uint())
		case "size":
			op.size = v.Int()
		case "lines":
			op.lines = v.Int()
		case "access":
			op.access = nsTime(v)
		case "count":
			op.count = v.Int()
		case "pin":
			op.hasPin = true
			op.pin.Level, err = ParsePinLevel(v.Str)
		case "reason":
			op.pin.Reason = v.Str
		case "pinned_at":
			op.pin.PinnedAt = nsTime(v)
		case "source":
			err = op.src.set(v)
		case "why":
			op.why = v.Str
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if op.key == "" {
		return errors.New("no key")
	}
	return nil
}

// intern returns the slot of pack id, adding it when new.
func (idx *packIndex) intern(id string) int32 {
	if idx.slotOf == nil {
		idx.slotOf = map[string]int32{}
	}
	if i, ok := idx.slotOf[id]; ok {
		return i
	}
	i := int32(len(idx.packIDs))
	idx.packIDs = append(idx.packIDs, id)
	idx.slotOf[id] = i
	return i
}

// apply replays one decoded line. An entry is never changed in place: a
// changed copy replaces it, so that a listing holding entries (List hands
// out pointers to their metadata, not copies) keeps a consistent view.
func (idx *packIndex) apply(op *indexOp) error {
	e := idx.entries[op.key]
	if e != nil && op.op != "del" {
		c := *e
		e = &c
		idx.entries[op.key] = e
	}
	switch op.op {
	case "put":
		if op.loc.pack == "" || op.loc.off < 0 || op.loc.clen < 0 {
			return fmt.Errorf("%s: put without a valid pack location", op.key)
		}
		switch op.loc.codec {
		case S2, Zstd, None:
		default:
			return fmt.Errorf("%s: unknown codec %s", op.key, quoteShort(string(op.loc.codec)))
		}
		if e == nil {
			e = &packEntry{meta: Meta{Key: op.key, CreatedAt: op.t, LastAccessAt: op.t, Source: op.src}}
			if !op.access.IsZero() {
				e.meta.LastAccessAt = op.access
			}
			e.meta.AccessCount = op.count
			if op.hasPin {
				e.meta.Pinned = op.pin
			}
			idx.entries[op.key] = e
		} else if op.hasPin && op.pin.Level > e.meta.Pinned.Level {
			e.meta.Pinned = op.pin // a corrupt copy replaced by a Put that pins
		}
		e.loc = op.loc
		e.loc.slot = idx.intern(op.loc.pack)
		e.meta.BytesUncompressed, e.meta.Lines = op.size, op.lines
		e.meta.BytesCompressed, e.meta.Compression = op.loc.clen, string(op.loc.codec)
	case "seen":
		if e == nil {
			return nil // deleted since
		}
		e.meta.LastAccessAt = op.t
		if op.hasPin && op.pin.Level > e.meta.Pinned.Level {
			op.pin.PinnedAt = op.t
			e.meta.Pinned = op.pin
		}
	case "access":
		if e != nil {
			e.meta.LastAccessAt = op.t
			e.meta.AccessCount++
		}
	case "pin":
		if e != nil {
			e.meta.Pinned = op.pin
		}
	case "del":
		delete(idx.entries, op.key)
	default:
		return fmt.Errorf("unknown op %s", quoteShort(op.op))
	}
	return nil
}

// Log lines. Built by hand: they are written for every blob of a purge.

func appendNum(b []byte, name string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

func appendStr(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, jstr(v)...)
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func opHead(op string, key Key, t time.Time) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"op":"`...)
	b = append(b, op...)
	b = append(b, `","key":"`...)
	b = append(b, key...)
	b = append(b, '"')
	return appendNum(b, "t", nanos(t))
}

func appendPin(b []byte, p PinInfo) []byte {
	b = appendStr(b, "pin", p.Level.String())
	if p.Reason != "" {
		b = appendStr(b, "reason", p.Reason)
	}
	if !p.PinnedAt.IsZero() {
		b = appendNum(b, "pinned_at", nanos(p.PinnedAt))
	}
	return b
}

// putLine records a frame. m carries creation time, pin and source; with
// snapshot, also the access time and count (a repack's rewritten log).
func putLine(m *Meta, loc packLoc, snapshot bool) []byte {
	b := opHead("put", m.Key, m.CreatedAt)
	b = appendStr(b, "pack", loc.pack)
	b = appendNum(b, "off", loc.off)
	b = appendNum(b, "len", loc.clen)
	b = appendStr(b, "codec", string(loc.codec))
	b = appendNum(b, "crc", int64(loc.crc))
	b = appendNum(b, "size", m.BytesUncompressed)
	b = appendNum(b, "lines", m.Lines)
	if snapshot {
		b = appendNum(b, "access", nanos(m.LastAccessAt))
		b = appendNum(b, "count", m.AccessCount)
	}
	if m.Pinned.Level > PinNone || snapshot {
		b = appendPin(b, m.Pinned)
	}
	if src, err := m.Source.MarshalJSON(); err == nil && len(src) > 2 {
		b = append(b, `,"source":`...)
		b = append(b, src...)
	}
	return append(b, '}', '\n')
}

func seenLine(key Key, t time.Time, pin PinLevel, reason string) []byte {
	b := opHead("seen", key, t)
	if pin > PinNone {
		b = appendPin(b, PinInfo{Level: pin, Reason: reason})
	}
	return append(b, '}', '\n')
}

func accessLine(key Key, t time.Time) []byte {
	return append(opHead("access", key, t), '}', '\n')
}

func pinLine(key Key, t time.Time, p PinInfo) []byte {
	return append(appendPin(opHead("pin", key, t), p), '}', '\n')
}

func delLine(key Key, t time.Time, why string) []byte {
	return append(appendStr(opHead("del", key, t), "why", why), '}', '\n')
}

// appendIndexLines appends log lines under meta.lock (the caller holds it)
// and, with sync, fsyncs the log (and packs/ when the log is new).
func (s *Store) appendIndexLines(data []byte, sync bool) error {
	if err := fsutil.MkdirPrivate(s.path(packsDir)); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	path := s.packIndexPath()
	_, statErr := os.Lstat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := fsutil.OpenPrivate(path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		// End a torn line left by a crash, so the new lines stay whole.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	if !sync {
		return nil
	}
	if err := fsutil.Sync(f); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	if created {
		return fsutil.SyncDir(s.path(packsDir))
	}
	return nil
}

// packLookup returns a copy of key's pack entry, reading what was appended
// to the log since the last look.
func (s *Store) packLookup(key Key) (packEntry, bool, error) {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.idx == nil && s.scans < maxScans {
		// A few lookups scan the log for the key's own lines instead of
		// reading the whole index: "ccm cache get" or a purge that meets
		// stored content in a store of 100,000 blobs then costs a scan at
		// memory speed and a megabyte of memory, not 150 MB.
		s.scans++
		return s.scanLookup(key)
	}
	if err := s.loadIndexLocked(); err != nil {
		return packEntry{}, false, err
	}
	e, ok := s.idx.entries[key]
	if !ok {
		return packEntry{}, false, nil
	}
	return *e, true, nil
}

// refreshIndex reads what was appended to the log since the last look
// (this process's own appends included).
func (s *Store) refreshIndex() {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.idx == nil {
		return // not read yet: the next lookup reads it all
	}
	if s.loadIndexLocked() != nil {
		s.idx = nil // read again from the start next time
	}
}

// packPresence answers "may this key be in a pack?" without replaying the
// index: the sorted key table of index.cache (when it describes the
// current log) plus the keys named by the log lines after the cache's
// offset. "No" is certain; "maybe" sends the caller to the full index.
// A Put (the capture hook) and each purge use it, so that storing into a
// store of 100,000 blobs does not read 35 MB of index first.
type packPresence struct {
	table []uint64         // sorted key prefixes from the cache
	tail  map[Key]struct{} // keys named in the log after off0
	ino   uint64
	start int64 // where the log lines after the cache begin
	off   int64 // log bytes taken into account
}

var keyField = []byte(`"key":"`)

// newPresence reads the cache's key table and scans the rest of the log.
func (s *Store) newPresence() (*packPresence, error) {
	p := &packPresence{tail: map[Key]struct{}{}}
	f, err := fsutil.OpenPrivate(s.packIndexPath(), os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsNotDir) {
			return p, nil
		}
		return nil, fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	st, err := fsutil.Fstat(f)
	if err != nil {
		return nil, fmt.Errorf("pack index: %w", err)
	}
	p.ino = st.ID.Ino
	if ino, off, table, ok := s.readKeyTable(); ok && ino == st.ID.Ino && off <= st.Size {
		p.table, p.off, p.start = table, off, off
	}
	return p, p.scan(f, st.Size)
}

// scan adds the keys of the log's lines from p.off to size.
func (p *packPresence) scan(f *os.File, size int64) error {
	if size <= p.off {
		return nil
	}
	buf := make([]byte, size-p.off)
	n, err := f.ReadAt(buf, p.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("pack index: %w", err)
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return nil
	}
	buf = buf[:end+1]
	p.off += int64(end + 1)
	for {
		i := bytes.Index(buf, keyField)
		if i < 0 {
			return nil
		}
		buf = buf[i+len(keyField):]
		j := bytes.IndexByte(buf, '"')
		if j < 0 {
			return nil
		}
		p.tail[Key(buf[:j])] = struct{}{}
		buf = buf[j:]
	}
}

// maybe reports whether key may be in a pack.
func (p *packPresence) maybe(key Key) bool {
	if _, ok := p.tail[key]; ok {
		return true
	}
	_, found := slices.BinarySearch(p.table, keyPrefix(key))
	return found
}

// mayBeInPacks reports whether key may be in a pack: from the index when
// this Store has read it already, else from a packPresence.
func (s *Store) mayBeInPacks(key Key) (bool, error) {
	s.idxMu.Lock()
	loaded := s.idx != nil
	s.idxMu.Unlock()
	if loaded {
		return true, nil // packLookup reads only what was appended since
	}
	p, err := s.newPresence()
	if err != nil {
		return false, err
	}
	return p.maybe(key), nil
}

// maxScans is how many lookups a Store answers by scanning the log before
// it reads the whole index (a restore looks up thousands of keys).
const maxScans = 8

// scanLookup replays only the log lines that name key: every line is
// about one key, so they alone give its entry. The log is read 1 MB at a
// time.
func (s *Store) scanLookup(key Key) (packEntry, bool, error) {
	f, err := fsutil.OpenPrivate(s.packIndexPath(), os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsNotDir) {
			return packEntry{}, false, nil
		}
		return packEntry{}, false, fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	idx := &packIndex{entries: map[Key]*packEntry{}}
	needle := []byte(`"key":"` + string(key) + `"`)
	buf := make([]byte, 1<<20)
	var carry []byte
	for {
		n, rerr := f.Read(buf)
		data := append(carry, buf[:n]...)
		end := bytes.LastIndexByte(data, '\n')
		if end >= 0 {
			lines := data[:end+1]
			for {
				i := bytes.Index(lines, needle)
				if i < 0 {
					break
				}
				start := bytes.LastIndexByte(lines[:i], '\n') + 1
				stop := i + bytes.IndexByte(lines[i:], '\n')
				var op indexOp
				if parseOp(lines[start:stop], &op) == nil && op.key == key {
					idx.apply(&op)
				}
				lines = lines[stop+1:]
			}
			carry = append(carry[:0:0], data[end+1:]...)
		} else {
			carry = data
		}
		if rerr == io.EOF || n == 0 {
			break
		}
		if rerr != nil {
			return packEntry{}, false, fmt.Errorf("pack index: %w", rerr)
		}
	}
	e, ok := idx.entries[key]
	if !ok {
		return packEntry{}, false, nil
	}
	return *e, true, nil
}
