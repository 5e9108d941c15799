package ccm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"ccm/internal/batch"
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
	batch.Run(context.Background(), len(parts), len(parts), func(i int) { ops[i] = parseLines(parts[i]) }, nil)
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
