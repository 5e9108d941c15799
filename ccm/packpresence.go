// Pack presence: this file answers "may this key be in a pack?" without
// replaying the pack index, for a Put and for each purge: the key table
// of index.cache plus the keys of the log lines after it, and a bounded
// scan of the log for a key the table does not settle.

package ccm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"ccm/internal/fsutil"
)

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
