package ccm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// Entry is one blob of a listing, or metadata whose blob is gone.
type Entry struct {
	Key   Key
	Files []BlobFile // the blob's files; empty for metadata without a blob
	// Meta is the blob's metadata. For a blob without a metadata file it
	// is synthesized from the file (unpinned, times from its mtime) and
	// MetaMissing is set. It is nil when MetaErr is set.
	Meta        *Meta
	MetaPath    string // "" when there is no metadata file
	MetaMissing bool
	MetaErr     error // the metadata file exists but cannot be used
}

// DiskBytes is the size of the blob's files on disk.
func (e *Entry) DiskBytes() int64 {
	var n int64
	for _, f := range e.Files {
		n += f.Size
	}
	return n
}

// Orphan reports metadata whose blob no longer exists.
func (e *Entry) Orphan() bool { return len(e.Files) == 0 }

// TempFile is a temp file a crashed writer left behind.
type TempFile struct {
	Path    string
	ModTime time.Time
	Size    int64
}

// Listing is the whole store: every blob and metadata file, sorted by key,
// leftover temp files, the packs, and pack index lines that could not be
// used.
type Listing struct {
	Entries     []Entry
	Temps       []TempFile
	Packs       []PackInfo
	IndexErrors []string

	slots int // 1 + the pack slots of the index, for PlanRepack
}

// PackInfo is one pack file: its size and what of it the index uses.
type PackInfo struct {
	ID        string
	Path      string
	Size      int64 // bytes on disk; -1 when the index names a pack that is missing
	Live      int   // blobs the index places in it
	LiveBytes int64 // their frames' bytes

	slot int32 // as BlobFile.slot
}

// Dead is the pack's bytes that no blob uses (header aside): deleted or
// superseded frames, or a whole pack no index line names.
func (p PackInfo) Dead() int64 {
	if p.Size < 0 {
		return 0
	}
	return max(0, p.Size-int64(len(packMagic))-p.LiveBytes)
}

// listPacks returns every pack file and every pack the index names, with
// the live counts of live.
func (s *Store) listPacks(live map[string]*PackInfo) ([]PackInfo, error) {
	names, err := readNames(s.path(packsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", s.path(packsDir), err)
	}
	var out []PackInfo
	for _, n := range names {
		id, ok := strings.CutSuffix(n.name, packExt)
		if n.isDir || !ok || !validPackID(id) {
			continue
		}
		pi := PackInfo{ID: id, Path: s.packPath(id)}
		if l := live[id]; l != nil {
			pi = *l
			delete(live, id)
		}
		if st, err := fsutil.Lstat(pi.Path); err != nil {
			pi.Size = -1
		} else {
			pi.Size = st.Size
		}
		out = append(out, pi)
	}
	for _, l := range live {
		l.Size = -1 // named by the index, missing on disk
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// List reads the whole store. Metadata files are read in parallel with
// plain openat/read calls and decoded with gjson: at 100,000 blobs this is
// what keeps "ccm cache stats" and a size prune well under two seconds.
// progress, if not nil, is called now and then with entries done and total.
// A missing store is ErrNoStore.
func (s *Store) List(ctx context.Context, progress func(done, total int)) (*Listing, error) {
	if !s.Exists() {
		return nil, fmt.Errorf("%w at %s", ErrNoStore, s.root)
	}
	lst := &Listing{}
	byKey := make(map[Key]*Entry)
	get := func(k Key) *Entry {
		e := byKey[k]
		if e == nil {
			e = &Entry{Key: k}
			byKey[k] = e
		}
		return e
	}
	// Blob names: <hex>.zst|.gz|.txt, flat or under a two-hex-digit folder.
	err := s.scanDir(blobsDir, lst, func(dir, name string) {
		ext := filepath.Ext(name)
		k, ok := KeyFromHex(strings.TrimSuffix(name, ext))
		if !ok {
			return
		}
		for _, c := range compressions {
			if c.Ext() == ext {
				e := get(k)
				e.Files = append(e.Files, BlobFile{Path: dir + "/" + name, Compression: c})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	err = s.scanDir(metaDir, lst, func(dir, name string) {
		k, ok := KeyFromHex(strings.TrimSuffix(name, ".json"))
		if !ok || !strings.HasSuffix(name, ".json") {
			return
		}
		if e := get(k); e.MetaPath == "" {
			e.MetaPath = dir + "/" + name
		}
	})
	if err != nil {
		return nil, err
	}
	s.idxMu.Lock()
	err = s.loadIndexLocked()
	if err != nil {
		s.idxMu.Unlock()
		return nil, err
	}
	lst.Entries = make([]Entry, 0, len(byKey)+len(s.idx.entries))
	lst.slots = len(s.idx.packIDs) + 1
	bySlot := make([]*PackInfo, len(s.idx.packIDs)) // no map lookup per blob
	live := make(map[string]*PackInfo)
	// The metadata is the index's own (never changed in place, see
	// apply); the pack files take one allocation: at 100,000 blobs,
	// copies and small allocations were a fifth of the listing.
	files := make([]BlobFile, 0, len(s.idx.entries))
	for k, pe := range s.idx.entries {
		pi := bySlot[pe.loc.slot]
		if pi == nil {
			pi = &PackInfo{ID: pe.loc.pack, Path: s.packPath(pe.loc.pack), slot: pe.loc.slot + 1}
			bySlot[pe.loc.slot] = pi
			live[pe.loc.pack] = pi
		}
		pi.Live++
		pi.LiveBytes += pe.loc.clen
		m := &pe.meta
		files = append(files, BlobFile{Path: pi.Path, Compression: pe.loc.codec, Size: pe.loc.clen,
			Packed: true, Offset: pe.loc.off, CRC: pe.loc.crc, RawSize: pe.meta.BytesUncompressed, slot: pe.loc.slot + 1})
		bf := files[len(files)-1 : len(files) : len(files)]
		if e := byKey[k]; e != nil {
			e.Files = append(bf, e.Files...)
			e.Meta = m
			continue
		}
		lst.Entries = append(lst.Entries, Entry{Key: k, Files: bf, Meta: m})
	}
	for _, b := range s.idx.bad {
		lst.IndexErrors = append(lst.IndexErrors, fmt.Sprintf("%s: line %d: %s", s.packIndexPath(), b.line, b.err))
	}
	s.idxMu.Unlock()
	for _, e := range byKey {
		lst.Entries = append(lst.Entries, *e)
	}
	if lst.Packs, err = s.listPacks(live); err != nil {
		return nil, err
	}
	lst.Entries = sortEntries(lst.Entries)
	if err := s.fillEntries(ctx, lst.Entries, progress); err != nil {
		return nil, err
	}
	return lst, nil
}

// sortEntries sorts by key. Keys are ordered by a number made of their
// first hex digits (keyPrefix), with a radix sort on it (8 passes of one
// byte, linear), then whole where two numbers tie; the entries (about 100
// bytes each) are moved once. At 100,000 blobs a comparison sort was a
// tenth of "ccm prune --dry-run".
func sortEntries(es []Entry) []Entry {
	if len(es) < 2 {
		return es
	}
	type item struct {
		prefix uint64
		i      int32
	}
	items := make([]item, len(es))
	tmp := make([]item, len(es))
	for i := range es {
		items[i] = item{keyPrefix(es[i].Key), int32(i)}
	}
	for shift := uint(0); shift < 64; shift += 8 {
		var count [257]int
		for _, it := range items {
			count[int(byte(it.prefix>>shift))+1]++
		}
		if count[int(byte(items[0].prefix>>shift))+1] == len(items) {
			continue // every key has the same byte here
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for _, it := range items {
			d := byte(it.prefix >> shift)
			tmp[count[d]] = it
			count[d]++
		}
		items, tmp = tmp, items
	}
	// Ties of the prefix (rare for hashes) are ordered by the whole key.
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].prefix == items[j-1].prefix &&
			es[items[j].i].Key < es[items[j-1].i].Key; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	sorted := make([]Entry, len(es))
	for j, it := range items {
		sorted[j] = es[it.i]
	}
	return sorted
}

// keyPrefix orders keys as strings do: the scheme's first letter ("b2s:"
// before "sha256:"), then the first 14 hex digits.
func keyPrefix(k Key) uint64 {
	if k == "" {
		return 0
	}
	p := uint64(k[0]) << 56
	i := 4 // after "b2s:"
	if k[0] == 's' {
		i = 7 // after "sha256:"
	}
	for shift := 52; i < len(k) && shift >= 0; i, shift = i+1, shift-4 {
		p |= uint64(hexVal[k[i]]) << shift
	}
	return p
}

// hexVal maps a lower-case hex digit to its value (anything else to 0:
// keys are validated before they are listed).
var hexVal = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	return
}()

// scanDir calls fn for every name in root/sub and in its two-hex-digit
// fan-out folders, and records temp files.
func (s *Store) scanDir(sub string, lst *Listing, fn func(dir, name string)) error {
	dir := s.path(sub)
	names, err := readNames(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, n := range names {
		switch {
		case n.isDir && len(n.name) == 2 && isLowerHex(n.name):
			fan := filepath.Join(dir, n.name)
			inner, err := readNames(fan)
			if err != nil {
				return fmt.Errorf("list %s: %w", fan, err)
			}
			for _, m := range inner {
				if s.isTemp(m.name) {
					lst.addTemp(filepath.Join(fan, m.name))
				} else if !m.isDir {
					fn(fan, m.name)
				}
			}
		case s.isTemp(n.name):
			lst.addTemp(filepath.Join(dir, n.name))
		case !n.isDir:
			fn(dir, n.name)
		}
	}
	return nil
}

func (s *Store) isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".ccm-tmp-")
}

func (l *Listing) addTemp(path string) {
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	l.Temps = append(l.Temps, TempFile{Path: path, ModTime: fi.ModTime(), Size: fi.Size()})
}

type dirName struct {
	name  string
	isDir bool
}

// readNames lists a directory without a stat per entry (getdents gives
// the type).
func readNames(dir string) ([]dirName, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirName, len(des))
	for i, d := range des {
		out[i] = dirName{d.Name(), d.IsDir()}
	}
	return out, nil
}
