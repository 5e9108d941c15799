package ccm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"ccm/internal/fsutil"
)

// maxMetaSize bounds what is read as a metadata file; real ones are under
// 2 KB, so anything larger is not metadata.
const maxMetaSize = 1 << 20

// Open returns a reader of key's content and its metadata. The content is
// hashed as it streams; at the end, a mismatch makes Read return an error
// wrapping ErrCorrupt instead of io.EOF, so the caller never mistakes
// altered content for good content (it should discard what it read).
//
// The access (time and count) is recorded when the reader is closed
// after reading the content to its verified end, best-effort: reading
// never depends on being able to write, so a full disk or a store the
// user may only read gives the content all the same. The metadata
// returned is as it was before this access.
func (s *Store) Open(ctx context.Context, key Key) (io.ReadCloser, *Meta, error) {
	return s.open(ctx, key, true)
}

// Export is Open for content copied out of the store (into an archive):
// verified in the same way, but not counted as an access, so copying
// neither writes to the store nor makes old content look used.
func (s *Store) Export(ctx context.Context, key Key) (io.ReadCloser, *Meta, error) {
	return s.open(ctx, key, false)
}

func (s *Store) open(ctx context.Context, key Key, access bool) (io.ReadCloser, *Meta, error) {
	if _, err := ParseKey(string(key)); err != nil {
		return nil, nil, err
	}
	if !s.Exists() {
		return nil, nil, fmt.Errorf("%s: %w (no store at %s)", key, ErrNotFound, s.root)
	}
	unlock, err := s.readLock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	files, err := s.findBlobs(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	m, err := s.metaOf(key, files)
	if err != nil {
		return nil, nil, err
	}
	rc, err := s.openFile(key, files[0])
	if err != nil {
		return nil, nil, err
	}
	if !access {
		return rc, m, nil
	}
	return &accessReader{ReadCloser: rc, record: func() { s.recordAccess(ctx, key) }}, m, nil
}

// accessReader records an access when it is closed after its content was
// read to the verified end.
type accessReader struct {
	io.ReadCloser
	record func()
	done   bool
}

func (a *accessReader) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if err == io.EOF {
		a.done = true
	}
	return n, err
}

func (a *accessReader) Close() error {
	err := a.ReadCloser.Close()
	if a.done && a.record != nil {
		a.record()
		a.record = nil
	}
	return err
}

// Get returns key's whole content, verified. When the store holds the
// blob in two forms and the first is corrupt, the second is tried. The
// access is recorded after, best-effort, as Open does.
func (s *Store) Get(ctx context.Context, key Key) ([]byte, error) {
	rc, m, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	b, err := readAllHint(rc, m.BytesUncompressed)
	rc.Close()
	if err == nil || !errors.Is(err, ErrCorrupt) {
		return b, err
	}
	files, ferr := s.findBlobs(key)
	if ferr != nil {
		return nil, err
	}
	for _, f := range files[1:] {
		rc2, oerr := s.openFile(key, f)
		if oerr != nil {
			continue
		}
		b2, rerr := readAllHint(rc2, m.BytesUncompressed)
		rc2.Close()
		if rerr == nil {
			s.recordAccess(ctx, key)
			return b2, nil
		}
	}
	return nil, err
}

// Stat returns key's metadata without counting an access. For a blob
// without a metadata file it describes the blob file alone.
func (s *Store) Stat(key Key) (*Meta, error) {
	if _, err := ParseKey(string(key)); err != nil {
		return nil, err
	}
	files, err := s.findBlobs(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return s.metaOf(key, files)
}

// metaOf returns the metadata of key, whose stored files are files
// (perhaps none), reading only.
func (s *Store) metaOf(key Key, files []BlobFile) (*Meta, error) {
	if len(files) > 0 && files[0].Packed {
		return s.packMeta(key)
	}
	m, path, err := s.readMeta(key)
	switch {
	case err == nil:
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: %w (metadata %s has no blob)", key, ErrNotFound, path)
		}
		return m, nil
	case errors.Is(err, ErrNotFound):
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return metaFromFile(key, files[0])
	default:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
}

// readLock takes the shared lock for a reader that updates metadata. A
// store the user cannot write (a read-only copy) is read without it.
func (s *Store) readLock(ctx context.Context) (func(), error) {
	l, err := s.lock(ctx, false)
	if err != nil {
		if isReadOnly(err) {
			return func() {}, nil
		}
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

func isReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// recordAccess records an access to key: last_access_at = now,
// access_count + 1, under the shared store lock (a prune between the read
// and now may have removed the blob, whose metadata must then not come
// back). It is best-effort: a full disk, a read-only store or a held lock
// loses one access time, which only delays an age prune; nothing is
// reported. A blob without metadata is left so.
func (s *Store) recordAccess(ctx context.Context, key Key) {
	unlock, err := s.readLock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	files, err := s.findBlobs(key)
	if err != nil || len(files) == 0 {
		return
	}
	if files[0].Packed {
		// An access line, not fsynced. Packs are never rewritten for it.
		s.appendLocked(ctx, accessLine(key, s.now()), false)
		return
	}
	unlockMeta, err := s.lockMeta(ctx)
	if err != nil {
		return
	}
	defer unlockMeta()
	m, path, err := s.readMeta(key)
	if err != nil {
		return
	}
	m.LastAccessAt = s.now()
	m.AccessCount++
	s.writeMeta(path, m, nil)
}

// packMeta returns a copy of the metadata of key's pack entry.
func (s *Store) packMeta(key Key) (*Meta, error) {
	e, ok, err := s.packLookup(key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	m := e.meta
	return &m, nil
}

// readMeta reads key's metadata. It returns the path the metadata has (or
// would have, flat, when it does not exist) and ErrNotFound or an error
// wrapping ErrBadMeta.
func (s *Store) readMeta(key Key) (*Meta, string, error) {
	cands := s.metaCandidates(key)
	for _, path := range cands {
		b, err := readRegular(path, maxMetaSize)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsNotDir) {
				continue
			}
			return nil, path, err
		}
		if len(b) == 0 {
			// What a crash leaves of a batched, not yet committed write: it
			// holds nothing, so the blob is treated as having no metadata.
			return nil, path, ErrNotFound
		}
		m, err := parseMeta(b, key)
		return m, path, err
	}
	return nil, cands[0], ErrNotFound
}

// writeMeta replaces a metadata file atomically (0600), durably unless it
// is part of a batch.
func (s *Store) writeMeta(path string, m *Meta, b *Batch) error {
	data, err := encodeMeta(m)
	if err != nil {
		return err
	}
	err = b.write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	return nil
}

// metaFromFile describes a blob that has no metadata file (a crash between
// the blob and its metadata, or a file copied in by hand): unpinned, with
// the file's modification time as creation and access time.
func metaFromFile(key Key, f BlobFile) (*Meta, error) {
	fi, err := os.Lstat(f.Path)
	if err != nil {
		return nil, err
	}
	m := &Meta{Key: key, CreatedAt: fi.ModTime(), LastAccessAt: fi.ModTime(),
		BytesCompressed: fi.Size(), Compression: string(f.Compression)}
	if f.Compression == None {
		m.BytesUncompressed = fi.Size()
	}
	return m, nil
}

// readRegular reads a regular file, refusing symlinks, special files and
// files larger than max.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := fsutil.OpenPrivate(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes is too large", path, ErrBadMeta, fi.Size())
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// openFile opens one stored file of key for verified reading.
func (s *Store) openFile(key Key, bf BlobFile) (io.ReadCloser, error) {
	if bf.Packed {
		return s.openPacked(key, bf)
	}
	f, err := fsutil.OpenPrivate(bf.Path, os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, err
	}
	r, release, err := blobReader(f, bf.Compression)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s (%s): %w", key, bf.Path, err)
	}
	return &verifyReader{r: r, f: f, release: release, h: key.newHash(), key: key, path: bf.Path}, nil
}

// readAllHint reads r to the end into a buffer sized by hint.
func readAllHint(r io.Reader, hint int64) ([]byte, error) {
	const maxHint = 1 << 30
	if hint <= 0 || hint > maxHint {
		hint = 64 << 10
	}
	buf := bytes.NewBuffer(make([]byte, 0, hint+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
