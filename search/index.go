// Package search keeps the search index of ccm's home and answers
// queries from it: which messages of which sessions, live or archived,
// hold some words, a phrase or a regular expression.
//
// The index (package textindex) holds hashed words and, per message,
// where the message is; the text (package searchtext reads it) stays where
// it is: in the transcripts, in the CCM store (the content of [CCM_CACHED]
// stubs) and, for archived sessions, in an index part written from the
// archive once. A query finds the candidate messages in the index, reads
// them back, checks them and cuts a snippet. Every search first brings the index up to date: only
// the new bytes of a grown transcript, new and removed sessions, new
// archives.
//
// Everything lives under one folder (0700) of ccm's home, files 0600:
// catalog and catalog.log (what is indexed, up to where), seg-N.tix
// (segments), parts/<folder>/<id>.part (archived sessions' text), lock.
package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/textindex"
)

// Dir is the index's folder under ccm's home.
func Dir(home string) string { return filepath.Join(home, "search") }

// Index is an open search index, locked against other ccm processes
// until Close.
type Index struct {
	dir  string
	lock *fsutil.Lock
	cat  *catalog
	segs map[int]*openSeg
	// Rebuilt says why the index was started afresh when it was opened
	// ("" when it was not): a missing or damaged catalog or segment.
	Rebuilt string

	gen    uint32 // updates run since the index was opened (fileEntry.seen)
	mu     sync.Mutex
	broken map[string]bool // archives whose part a read found missing or damaged
}

// errStalePart: a search or a page met an archive whose part is missing
// or damaged; With writes the part again and runs it again.
var errStalePart = errors.New("an archived session's index part is missing or damaged")

// markBroken notes an archive whose part a search or a page could not
// read: With drops its entry, so that the part is written again from the
// archive (an archive that did not change is otherwise never read again).
func (ix *Index) markBroken(f *fileEntry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.broken == nil {
		ix.broken = map[string]bool{}
	}
	ix.broken[f.key()] = true
}

// dropBroken removes the entries markBroken noted, and their parts, and
// saves the catalog; it reports whether there were any.
func (ix *Index) dropBroken() (bool, error) {
	ix.mu.Lock()
	broken := ix.broken
	ix.broken = nil
	ix.mu.Unlock()
	if len(broken) > 0 {
		// One part found missing: others may be too (a crash lost the
		// parts renamed into place since the last fsync, a folder
		// removed); they go in the same retry, not one per search.
		for k, f := range ix.cat.Files {
			if f.Src == srcArchive && f.Offset > 0 { // an archive indexed as empty has no part
				if _, err := os.Stat(filepath.Join(ix.dir, f.Part)); err != nil {
					broken[k] = true
				}
			}
		}
	}
	for k := range broken {
		if f := ix.cat.Files[k]; f != nil {
			os.Remove(filepath.Join(ix.dir, f.Part))
			ix.cat.del(k)
		}
	}
	if len(broken) == 0 {
		return false, nil
	}
	return true, ix.saveCatalog()
}

type openSeg struct {
	f *os.File
	s *textindex.Segment
}

// lockWait is how long Open waits for another ccm process's update.
const lockWait = 2 * time.Minute

// Open opens (creating it when missing) the index in dir and locks it.
// A damaged catalog or segment is never trusted: the index starts empty
// and the next update rebuilds it.
func Open(ctx context.Context, dir string) (*Index, error) {
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, fsutil.DirMode); err != nil {
		return nil, err
	}
	lk, err := fsutil.LockFile(ctx, filepath.Join(dir, "lock"), true, lockWait)
	if err != nil {
		return nil, err
	}
	ix := &Index{dir: dir, lock: lk, segs: map[int]*openSeg{}}
	cat, err := readCatalog(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cat = newCatalog()
		ix.Rebuilt = "no index yet"
	case err != nil:
		cat = newCatalog()
		ix.Rebuilt = err.Error()
	}
	ix.cat = cat
	if ix.Rebuilt == "" {
		for _, s := range cat.Segs {
			if err := ix.openSeg(s); err != nil {
				ix.closeSegs()
				ix.cat = newCatalog()
				ix.Rebuilt = err.Error()
				break
			}
		}
	}
	if err := ix.removeStray(); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

func (ix *Index) segPath(id int) string {
	return filepath.Join(ix.dir, "seg-"+strconv.Itoa(id)+".tix")
}

func (ix *Index) openSeg(e segEntry) error {
	f, err := fsutil.OpenRegular(ix.segPath(e.ID))
	if err != nil {
		return fmt.Errorf("segment %d: %w", e.ID, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() != e.Size {
		err = fmt.Errorf("%w: size %d, catalog says %d", textindex.ErrCorrupt, fi.Size(), e.Size)
	}
	var s *textindex.Segment
	if err == nil {
		s, err = textindex.Open(f, e.Size)
	}
	if err == nil && s.Docs() != e.Docs {
		err = fmt.Errorf("%w: %d documents, catalog says %d", textindex.ErrCorrupt, s.Docs(), e.Docs)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("segment %d: %w", e.ID, err)
	}
	ix.segs[e.ID] = &openSeg{f: f, s: s}
	return nil
}

func (ix *Index) closeSegs() {
	for id, s := range ix.segs {
		s.f.Close()
		delete(ix.segs, id)
	}
}

// removeStray deletes segments the catalog does not name (left by an
// update that was killed, or by a rebuild) and temp files.
func (ix *Index) removeStray() error {
	entries, err := os.ReadDir(ix.dir)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, s := range ix.cat.Segs {
		keep[filepath.Base(ix.segPath(s.ID))] = true
	}
	for _, e := range entries {
		n := e.Name()
		stray := strings.HasSuffix(n, ".tix") && !keep[n] || strings.HasPrefix(n, ".") && strings.Contains(n, ".ccm-tmp-")
		if stray {
			if err := os.Remove(filepath.Join(ix.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// Close releases the index.
func (ix *Index) Close() error {
	ix.closeSegs()
	if ix.lock != nil {
		err := ix.lock.Unlock()
		ix.lock = nil
		return err
	}
	return nil
}

// saveCatalog writes the catalog durably (the segments it names already
// are).
func (ix *Index) saveCatalog() error { return ix.cat.save(ix.dir) }

// Forget removes the index and everything in its folder (the archived
// sessions' parts included), under the index's lock.
func Forget(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lk, err := fsutil.LockFile(ctx, filepath.Join(dir, "lock"), true, lockWait)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "lock" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	// The lock file goes last; a search waiting on it starts afresh.
	return os.Remove(filepath.Join(dir, "lock"))
}

// Stats describes the index.
type Stats struct {
	Segments  int   `json:"segments"`
	Files     int   `json:"files"`
	Docs      int   `json:"messages"`
	TextBytes int64 `json:"text_bytes"`
	IndexSize int64 `json:"index_bytes"`
	PartBytes int64 `json:"part_bytes"`
}

// Stats counts the index's segments, files, messages and bytes.
func (ix *Index) Stats() Stats {
	st := Stats{Segments: len(ix.cat.Segs), Files: len(ix.cat.Files)}
	for _, s := range ix.cat.Segs {
		st.Docs += s.Docs
		st.TextBytes += s.Text
		st.IndexSize += s.Size
	}
	for _, f := range []string{"catalog", "catalog.log"} {
		if fi, err := os.Stat(filepath.Join(ix.dir, f)); err == nil {
			st.IndexSize += fi.Size()
		}
	}
	filepath.WalkDir(filepath.Join(ix.dir, "parts"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				st.PartBytes += fi.Size()
			}
		}
		return nil
	})
	return st
}

// Drop removes from the index the live files at paths (transcripts, or
// folders whose transcripts go with them), so that their hits are gone as
// soon as they are deleted (ccm clean calls it). Their messages stay in
// the segments, unreachable, until a merge drops them. An index that is
// missing, damaged or busy for long is left alone: the next search drops
// what is gone anyway.
func Drop(ctx context.Context, dir string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(dir, "catalog")); err != nil {
		return nil
	}
	lk, err := fsutil.LockFile(ctx, filepath.Join(dir, "lock"), true, 5*time.Second)
	if err != nil {
		return nil
	}
	defer lk.Unlock()
	cat, err := readCatalog(dir)
	if err != nil {
		return nil
	}
	for k, f := range cat.Files {
		if f.Src != srcLive {
			continue
		}
		for _, p := range paths {
			if f.Path == p || strings.HasPrefix(f.Path, p+string(filepath.Separator)) {
				cat.del(k)
				break
			}
		}
	}
	if len(cat.dirty) == 0 {
		return nil
	}
	return cat.save(dir)
}

// With opens the index in dir, brings it up to date with src and calls
// fn with it. When the update or fn meets a damaged segment (one that
// opened fine but fails a check on a lookup: a changed byte in its
// postings), the index is removed and rebuilt, and fn runs again on the
// rebuilt one.
func With(ctx context.Context, dir string, src Sources, fn func(ix *Index, st UpdateStats) error) error {
	for try := 0; ; try++ {
		// The sources are listed while the index opens: both wait on
		// the file system.
		start := time.Now()
		listed := make(chan listing, 1)
		go func() { listed <- listSources(src) }()
		ix, err := Open(ctx, dir)
		if err != nil {
			<-listed
			return err
		}
		l := <-listed
		if time.Since(start) > time.Second {
			// Open waited for another process's update: what was listed
			// before may be older than its catalog.
			start, l = time.Now(), listSources(src)
		}
		st, err := ix.update(ctx, src, l, start)
		if err == nil {
			err = fn(ix, st)
			// Merging small segments waits until fn has answered; a
			// merge that fails leaves the index as it was, and the next
			// update tries again.
			if terr := ix.tidy(ctx); err == nil && terr != nil && !errors.Is(terr, context.Canceled) {
				err = terr
			}
		}
		// A part that fn could not read is written again from its
		// archive, and fn runs again on the index brought up to date.
		dropped, derr := ix.dropBroken()
		ix.Close()
		if derr != nil && err == nil {
			err = derr
		}
		if try == 0 && dropped && derr == nil && errors.Is(err, errStalePart) {
			continue
		}
		if try > 0 || !errors.Is(err, textindex.ErrCorrupt) {
			return err
		}
		if err := Forget(ctx, dir); err != nil {
			return err
		}
	}
}
