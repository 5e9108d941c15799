package ccm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ccm/internal/fsutil"
)

// Remove deletes key's blob files and then its metadata, and returns the
// bytes freed on disk. A blob in a pack is deleted from the index by the
// next SyncDirs, which the caller must call. The caller must hold the exclusive lock
// (LockExclusive): only prune removes blobs. Blob files go first, so a crash
// in between leaves metadata without a blob (which a later gc removes),
// never an unpinned-looking blob whose pin was in the lost metadata.
func (s *Store) Remove(key Key) (freed int64, err error) {
	if _, err := ParseKey(string(key)); err != nil {
		return 0, err
	}
	files, err := s.findBlobs(key)
	if err != nil {
		return 0, fmt.Errorf("remove %s: %w", key, err)
	}
	for _, f := range files {
		if f.Packed {
			// The index forgets it first (its del line is appended by
			// SyncDirs, with every other deletion, in one write): from then
			// on get answers "not in the store". The frame's bytes return to
			// the disk when a repack rewrites its pack (see Repack).
			s.delMu.Lock()
			s.pendingDel = append(s.pendingDel, delLine(key, s.now(), "pruned")...)
			s.delMu.Unlock()
			freed += f.Size
			continue
		}
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, fmt.Errorf("remove %s: %w", key, err)
		}
		freed += f.Size
	}
	for _, m := range s.metaCandidates(key) {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fsNotDir) {
			return freed, fmt.Errorf("remove %s: %w", key, err)
		}
	}
	return freed, nil
}

// RemoveTemp deletes a leftover temp file found by List. It refuses any
// path that is not a temp file inside the store.
func (s *Store) RemoveTemp(path string) error {
	rel, err := filepath.Rel(s.root, path)
	if err != nil || strings.HasPrefix(rel, "..") || !s.isTemp(filepath.Base(path)) {
		return fmt.Errorf("refusing to remove %s: not a temp file of the store", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// SyncDirs makes removals durable: one fsync of blobs/ and meta/ and of
// the pack index after a batch instead of one per file.
func (s *Store) SyncDirs() error {
	s.delMu.Lock()
	lines := s.pendingDel
	s.pendingDel = nil
	s.delMu.Unlock()
	if len(lines) > 0 {
		return s.appendLocked(context.Background(), lines, true)
	}
	if err := fsutil.SyncPath(s.packIndexPath()); err != nil {
		return err
	}
	for _, d := range []string{s.root, s.path(blobsDir), s.path(metaDir)} {
		if err := fsutil.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
