package ccm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"ccm/internal/fsutil"
)

// Errors callers test with errors.Is.
var (
	// ErrNotFound: no blob is stored under the key.
	ErrNotFound = errors.New("not in the store")
	// ErrCorrupt: a blob's content does not match its key (or does not
	// decompress). The content is never returned as if it were good.
	ErrCorrupt = errors.New("corrupt blob")
	// ErrLocked: another ccm process held the store's lock for longer than
	// the allowed wait (a prune, or a purge holding the store).
	ErrLocked = errors.New("store locked by another ccm process")
	// ErrNoStore: the store directory does not exist yet.
	ErrNoStore = errors.New("no store")
)

// Layout names inside the root.
const (
	blobsDir    = "blobs"
	metaDir     = "meta"
	indexFile   = "index.jsonl"
	lastKeyFile = "last_key"
	lockFile    = "lock"
	metaLock    = "meta.lock"
	tagFile     = "CACHEDIR.TAG"
)

// cacheDirTag is the CACHEDIR.TAG (bford.info/cachedir) that earlier
// versions of ccm wrote into the store. Backup tools that honour it skip
// the folder, but the store can hold the only copy of what a purge
// removed: a store is not a cache, so ccm no longer writes the tag and
// removes the one it wrote (a tag with other content is left alone).
const cacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by ccm.\n" +
	"# For information about cache directory tags, see:\n" +
	"#\thttps://bford.info/cachedir/\n"

// DefaultLockWait bounds how long an operation waits for the store lock.
const DefaultLockWait = 10 * time.Second

// DefaultRoot returns the store's default location, <claudeDir>/cache/ccm,
// where claude-context-manager kept it.
func DefaultRoot(claudeDir string) string {
	return filepath.Join(claudeDir, "cache", "ccm")
}

// Store is a CCM store rooted at a directory. It is safe for concurrent use
// by many goroutines, and several processes may use the same root at once.
type Store struct {
	root string

	// LockWait bounds every wait for a lock; zero means DefaultLockWait.
	// Set it before first use (hooks use a short wait and skip on timeout).
	LockWait time.Duration

	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time

	comp    Compression // from $CCM_COMPRESSION
	compErr error       // a bad $CCM_COMPRESSION fails Put, not reads

	layoutMu sync.Mutex
	layoutOK bool

	metaMu sync.Mutex // orders metadata updates within the process

	packCodec Compression // codec of new pack frames: S2 unless $CCM_COMPRESSION names one

	idxMu sync.Mutex // guards idx and scans
	idx   *packIndex // the pack index as last read; nil: not read yet
	scans int        // lookups answered by scanLookup

	delMu      sync.Mutex
	pendingDel []byte // del lines of Remove, appended by SyncDirs
}

// Open returns the store rooted at root. It creates nothing: the layout is
// made by the first Put. It fails only when root exists and is not a
// directory. $CCM_COMPRESSION is read here.
func Open(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("empty store path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("store %s is not a directory", abs)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("store %s: %w", abs, err)
	}
	s := &Store{root: abs}
	env := os.Getenv("CCM_COMPRESSION")
	s.comp, s.compErr = ParseCompression(env)
	s.packCodec = packCodecFor(env, s.comp)
	return s, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// SetCompression overrides $CCM_COMPRESSION for this store.
func (s *Store) SetCompression(c Compression) error {
	switch c {
	case Zstd, Gzip, None:
		s.comp, s.compErr = c, nil
		s.packCodec = packCodecFor(string(c), c)
		return nil
	}
	return fmt.Errorf("invalid compression %q: want zstd, gzip or none", c)
}

// packCodecFor is the codec of pack frames for a $CCM_COMPRESSION value:
// S2 for auto (the default), zstd for zstd and gzip (packs hold no gzip
// frames), raw for none.
func packCodecFor(env string, c Compression) Compression {
	switch {
	case c == None:
		return None
	case strings.EqualFold(strings.TrimSpace(env), "zstd"), c == Gzip:
		return Zstd
	}
	return S2
}

// Exists reports whether the store directory exists.
func (s *Store) Exists() bool {
	fi, err := os.Stat(s.root)
	return err == nil && fi.IsDir()
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) lockWait() time.Duration {
	if s.LockWait > 0 {
		return s.LockWait
	}
	return DefaultLockWait
}

func (s *Store) path(elem ...string) string {
	return filepath.Join(append([]string{s.root}, elem...)...)
}

// blobCandidates lists the paths a blob of key may have, in the order
// readers probe them: flat (written by ccm and claude-context-manager), then the
// two-character fan-out some documentation described.
func (s *Store) blobCandidates(key Key) []BlobFile {
	h := key.Hex()
	out := make([]BlobFile, 0, 2*len(compressions))
	for _, c := range compressions {
		out = append(out, BlobFile{Path: s.path(blobsDir, h+c.Ext()), Compression: c})
	}
	if s.hasFanout(blobsDir, h) {
		for _, c := range compressions {
			out = append(out, BlobFile{Path: s.path(blobsDir, h[:2], h+c.Ext()), Compression: c})
		}
	}
	return out
}

// metaCandidates lists where key's metadata may be, flat first.
func (s *Store) metaCandidates(key Key) []string {
	h := key.Hex()
	out := []string{s.path(metaDir, h+".json")}
	if s.hasFanout(metaDir, h) {
		out = append(out, s.path(metaDir, h[:2], h+".json"))
	}
	return out
}

// hasFanout reports whether the fan-out folder for hex exists: one stat
// instead of probing three file names in a folder ccm never creates.
func (s *Store) hasFanout(sub, hex string) bool {
	fi, err := os.Lstat(s.path(sub, hex[:2]))
	return err == nil && fi.IsDir()
}

// BlobFile is one stored copy of a blob: a file of its own, or a frame in
// a pack.
type BlobFile struct {
	Path        string // the blob's file, or the pack holding its frame
	Compression Compression
	Size        int64 // bytes on disk (of the frame, for a pack)

	Packed  bool   // a frame in the pack at Path
	Offset  int64  // the frame's start in the pack
	CRC     uint32 // CRC-32C of the frame
	RawSize int64  // uncompressed size, for a pack frame

	slot int32 // in a listing: 1 + the pack's slot in the index; 0 unknown
}

// findBlobs returns every stored copy of key's blob, its pack frame
// first, then its files in probe order. Normally there is one; two writers
// with different $CCM_COMPRESSION can leave two files, which hold the same
// content.
func (s *Store) findBlobs(key Key) ([]BlobFile, error) {
	var out []BlobFile
	maybe, err := s.mayBeInPacks(key)
	if err != nil {
		return nil, err
	}
	if maybe {
		e, ok, err := s.packLookup(key)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s.packFile(&e))
		}
	}
	files, err := s.findFiles(key)
	return append(out, files...), err
}

// findFiles returns the blob files of key (the layouts before packs).
func (s *Store) findFiles(key Key) ([]BlobFile, error) {
	var out []BlobFile
	for _, b := range s.blobCandidates(key) {
		fi, err := os.Lstat(b.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsNotDir) {
				continue
			}
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			// A symlink or directory under a blob's name is not ours to
			// follow: refusing it keeps reads inside the store.
			return nil, fmt.Errorf("%s is not a regular file", b.Path)
		}
		b.Size = fi.Size()
		out = append(out, b)
	}
	return out, nil
}

// ensureLayout creates the root, blobs/ and meta/ (0700) on first use,
// and removes the CACHEDIR.TAG earlier versions wrote. MkdirAll with 0700
// creates them private from the start.
func (s *Store) ensureLayout() error {
	s.layoutMu.Lock()
	defer s.layoutMu.Unlock()
	if s.layoutOK {
		return nil
	}
	for _, d := range []string{s.root, s.path(blobsDir), s.path(metaDir)} {
		if err := fsutil.MkdirPrivate(d); err != nil {
			return fmt.Errorf("create store: %w", err)
		}
	}
	tag := s.path(tagFile)
	if b, err := fsutil.ReadRegular(tag, int64(len(cacheDirTag))+1); err == nil && string(b) == cacheDirTag {
		if err := os.Remove(tag); err != nil {
			return fmt.Errorf("remove the cache tag: %w", err)
		}
	}
	s.layoutOK = true
	return nil
}

// LastKey returns the most recently stored key (last_key), validated.
func (s *Store) LastKey() (Key, error) {
	b, err := os.ReadFile(s.path(lastKeyFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("nothing stored yet in %s: %w", s.root, ErrNotFound)
		}
		return "", err
	}
	k, err := ParseKey(trimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.path(lastKeyFile), err)
	}
	return k, nil
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}
