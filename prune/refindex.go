package prune

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"ccm/ccm"
	"ccm/internal/fsutil"
)

// The reference index says which blobs the files that point into the
// store reference: transcripts (subagent files included), purge backups
// (compressed ones too) and the manifests of ccm archive, wherever they
// are. It lives in the store, <store>/refs/:
//
//	index.json  per file: its identity (device, inode, size, mtime), the
//	            hash of its last bytes read, and the keys found in it. A
//	            cache: missing or unreadable, it is made again.
//	roots       the folders ("d PATH") and files ("f PATH"), one a line, to look in besides
//	            the config dir's projects/ and the archive folder of the
//	            run: archive folders given with --to, other config dirs
//	            sharing the store, transcripts purged outside projects/.
//	            Not a cache: written durably, so a lost index is rebuilt
//	            with every archive folder ever used.
//	evicted.jsonl  the keys prune --evict-referenced deleted (see Evicted).
//	lock        taken while any of them is read for an update or written.
//
// Nothing in it is trusted to delete: every prune checks each recorded
// file against the file on disk (Refresh). A file that is unchanged keeps
// its keys; one that only grew (same inode, its old last bytes unchanged:
// Claude Code appends, and the capture hook's stubs land in transcripts)
// is read from where it was last read; any other change means a full
// read; a file that is gone takes its keys with it, unless the folder it
// was found in is not there at all (an archive folder on a disk that is
// not mounted keeps its references).
const (
	refsDir       = "refs"
	refsIndexFile = "index.json"
	refsRootsFile = "roots"
	refsLockFile  = "lock"
	refsFormat    = "ccm-refs/1"
)

// IndexLockWait bounds how long a command waits for the index's lock. A
// command that only keeps the index current (purge, clean, unarchive)
// skips its update when it cannot get the lock in time: the next prune
// reads the files it changed.
const IndexLockWait = 2 * time.Second

// RefIndex is the reference index of one store, loaded under its lock.
type RefIndex struct {
	dir     string
	entries map[string]*refEntry
	roots   []root
	rebuilt string // why the index was made anew, "" when it was read
	lock    *fsutil.Lock
	dirty   bool
	// readOnly: a dry run's index, checked in memory and never written.
	readOnly bool
}

// refEntry is what the index knows of one file.
type refEntry struct {
	Root  string    `json:"root"` // the root it was found under
	Dev   uint64    `json:"dev"`
	Ino   uint64    `json:"ino"`
	Size  int64     `json:"size"`     // bytes read
	MTime int64     `json:"mtime_ns"` // at the read
	Tail  string    `json:"tail,omitempty"`
	Keys  []uint32  `json:"keys,omitempty"` // into indexJSON.Keys
	keys  []ccm.Key // decoded
}

// indexJSON is index.json: keys once, files pointing at them.
type indexJSON struct {
	Format string               `json:"format"`
	Keys   []ccm.Key            `json:"keys"`
	Files  map[string]*refEntry `json:"files"`
}

// RefsDir is where a store keeps its reference index.
func RefsDir(storeRoot string) string { return filepath.Join(storeRoot, refsDir) }

// OpenIndex takes the index's lock (waiting at most wait) and reads it.
// The store's folder must exist; refs/ is created if missing. An index
// that is missing or cannot be read is started empty, and Rebuilt says
// why; the roots file must be readable, or OpenIndex fails: without it an
// archive folder outside the config dir could be forgotten.
func OpenIndex(ctx context.Context, storeRoot string, wait time.Duration) (*RefIndex, error) {
	dir := RefsDir(storeRoot)
	if fi, err := os.Stat(storeRoot); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w at %s", ccm.ErrNoStore, storeRoot)
	}
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("reference index: %w", err)
	}
	lk, err := fsutil.LockFile(ctx, filepath.Join(dir, refsLockFile), true, wait)
	if err != nil {
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, fmt.Errorf("reference index %s: %w (another ccm is updating it)", dir, ccm.ErrLocked)
		}
		return nil, fmt.Errorf("reference index: %w", err)
	}
	x := &RefIndex{dir: dir, entries: map[string]*refEntry{}, lock: lk}
	if x.roots, err = readRoots(filepath.Join(dir, refsRootsFile)); err != nil {
		lk.Unlock()
		return nil, err
	}
	x.rebuilt = x.load()
	return x, nil
}

// load reads index.json; it returns why it could not ("" when it did).
func (x *RefIndex) load() string {
	f, err := fsutil.OpenRegular(filepath.Join(x.dir, refsIndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "no reference index yet"
	}
	if err != nil {
		return "the reference index could not be read: " + err.Error()
	}
	defer f.Close()
	var ix indexJSON
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&ix); err != nil || ix.Format != refsFormat || ix.Files == nil {
		return "the reference index was damaged"
	}
	for _, k := range ix.Keys {
		if _, err := ccm.ParseKey(string(k)); err != nil {
			return "the reference index was damaged"
		}
	}
	for path, e := range ix.Files {
		if e == nil || !filepath.IsAbs(path) {
			return "the reference index was damaged"
		}
		e.keys = make([]ccm.Key, 0, len(e.Keys))
		for _, i := range e.Keys {
			if int(i) >= len(ix.Keys) {
				return "the reference index was damaged"
			}
			e.keys = append(e.keys, ix.Keys[i])
		}
		e.Keys = nil
		x.entries[path] = e
	}
	return ""
}

// ReadIndex reads the index without its lock and without creating
// anything, for a dry run: Refresh then checks it in memory, and Close
// writes nothing.
func ReadIndex(storeRoot string) (*RefIndex, error) {
	dir := RefsDir(storeRoot)
	x := &RefIndex{dir: dir, entries: map[string]*refEntry{}, readOnly: true}
	var err error
	if x.roots, err = readRoots(filepath.Join(dir, refsRootsFile)); err != nil {
		return nil, err
	}
	x.rebuilt = x.load()
	return x, nil
}

// adopt takes the files another reading of the index refreshed (the
// roots stay this index's own, read under its lock). What another command
// noted in between is checked again by the next refresh.
func (x *RefIndex) adopt(from *RefIndex) {
	x.entries = from.entries
	x.rebuilt = from.rebuilt
	x.dirty = true
}

// Rebuilt says why the index was made anew in this run, "" when it was
// read and checked.
func (x *RefIndex) Rebuilt() string { return x.rebuilt }

// Close writes the index back if it changed and releases the lock. The
// index is a cache, renamed into place whole but not synced: after a
// crash it may be missing, and is made again.
func (x *RefIndex) Close() error {
	if x.lock == nil {
		return nil
	}
	defer func() { x.lock.Unlock(); x.lock = nil }()
	if !x.dirty && x.rebuilt == "" {
		return nil
	}
	ix := indexJSON{Format: refsFormat, Files: make(map[string]*refEntry, len(x.entries))}
	at := map[ccm.Key]uint32{}
	for path, e := range x.entries {
		c := *e
		c.Keys = make([]uint32, 0, len(e.keys))
		for _, k := range e.keys {
			i, ok := at[k]
			if !ok {
				i = uint32(len(ix.Keys))
				at[k] = i
				ix.Keys = append(ix.Keys, k)
			}
			c.Keys = append(c.Keys, i)
		}
		ix.Files[path] = &c
	}
	return fsutil.WriteFileUnsynced(filepath.Join(x.dir, refsIndexFile), fsutil.FileMode, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		if err := json.NewEncoder(bw).Encode(&ix); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// root is a recorded root: a folder (walked) or a single file.
type root struct {
	path string
	dir  bool
}

func findRoot(roots []root, path string) int {
	return slices.IndexFunc(roots, func(r root) bool { return r.path == path })
}

// AddRoots records folders or files to look in on every refresh, besides
// the roots a run passes; the roots file is written durably before
// AddRoots returns. Paths are made absolute; ones already known are
// skipped. A path that is not there yet is taken as a folder (an archive
// folder about to be made).
func (x *RefIndex) AddRoots(paths ...string) error {
	if x.readOnly {
		return errors.New("reference index: read-only (a dry run)")
	}
	changed := false
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if findRoot(x.roots, abs) >= 0 {
			continue
		}
		fi, err := os.Stat(abs)
		x.roots = append(x.roots, root{path: abs, dir: err != nil || fi.IsDir()})
		changed = true
	}
	if !changed {
		return nil
	}
	return x.writeRoots()
}

// dropRoot forgets a file root whose file is gone.
func (x *RefIndex) dropRoot(path string) error {
	i := findRoot(x.roots, path)
	if i < 0 || x.readOnly {
		return nil
	}
	x.roots = slices.Delete(x.roots, i, i+1)
	return x.writeRoots()
}

// writeRoots writes the roots file durably.
func (x *RefIndex) writeRoots() error {
	slices.SortFunc(x.roots, func(a, b root) int { return strings.Compare(a.path, b.path) })
	var b bytes.Buffer
	for _, r := range x.roots {
		kind := "f "
		if r.dir {
			kind = "d "
		}
		b.WriteString(kind + r.path + "\n")
	}
	return fsutil.WriteFileBytes(filepath.Join(x.dir, refsRootsFile), fsutil.FileMode, b.Bytes())
}

// Roots are the recorded roots.
func (x *RefIndex) Roots() []string {
	out := make([]string, len(x.roots))
	for i, r := range x.roots {
		out[i] = r.path
	}
	return out
}

// readRoots reads the roots file: "d PATH" or "f PATH" a line, PATH
// absolute.
func readRoots(path string) ([]root, error) {
	f, err := fsutil.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reference index roots: %w", err)
	}
	defer f.Close()
	var roots []root
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		kind, p, _ := strings.Cut(line, " ")
		if (kind != "d" && kind != "f") || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("reference index roots %s: %q is not \"d PATH\" or \"f PATH\" with an absolute path (fix or remove the line)", path, line)
		}
		roots = append(roots, root{path: filepath.Clean(p), dir: kind == "d"})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reference index roots %s: %w", path, err)
	}
	return roots, nil
}
