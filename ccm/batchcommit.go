// Committing a batch: this file makes a Batch durable (Sync, Commit,
// Close): the pack written and fsynced, its index lines appended under the
// metadata lock, and the record of what the batch holds, kept in chunks.

package ccm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	"ccm/internal/fsutil"
)

// Commit makes every Put of the batch durable: one fsync of the pack and of
// packs/, one write and fsync of the index, and the metadata files of
// older blobs it updated. The batch can be used again afterwards.
func (b *Batch) Commit() error {
	defer b.Close()
	return b.sync(true)
}

// Sync makes every Put so far durable, as Commit does, and keeps the
// batch's pack open for the Puts that follow: a batch purge shares one
// batch, so one pack, among all its transcripts, and replaces each
// transcript once the blobs it names are durable. Puts may run while Sync
// does; those it did not see wait for the next Sync or Commit. Close a
// shared batch with Commit once every transcript is done.
func (b *Batch) Sync() error { return b.sync(false) }

func (b *Batch) sync(closing bool) error {
	// One sync at a time: the index append below holds meta.lock through
	// the batch's one descriptor, which two goroutines would share.
	b.syncMu.Lock()
	defer b.syncMu.Unlock()
	s := b.s
	b.mu.Lock()
	pw, ops, last := b.pw, b.ops, b.last
	files := make([]string, 0, len(b.files))
	for f := range b.files {
		files = append(files, f)
	}
	if !closing {
		// Keys made durable stay known: storing one again finds it in a
		// pack instead of writing a second frame.
		for k := range b.keys {
			b.synced[k] = struct{}{}
		}
	}
	b.files, b.last, b.ops, b.keys = make(map[string]struct{}), "", opList{}, make(map[Key]int)
	b.mu.Unlock()
	if pw != nil {
		err := fsutil.Sync(pw.f)
		if closing {
			if cerr := pw.f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = fsutil.SyncDir(s.path(packsDir))
		}
		if err != nil {
			if closing {
				os.Remove(pw.path)
				b.mu.Lock()
				b.pw = nil
				b.mu.Unlock()
			}
			return err
		}
	}
	if closing {
		b.mu.Lock()
		b.pw = nil
		b.mu.Unlock()
	}
	// From here on the pack stays: index lines may name it even if their
	// append fails half-way. An unreferenced pack is removed by a repack.
	if ops.n > 0 {
		unlock, err := b.lockMeta(context.Background())
		if err != nil {
			return err
		}
		err = b.appendOps(ops)
		unlock()
		s.refreshIndex()
		if err != nil {
			return err
		}
		if fi, err := os.Stat(s.packIndexPath()); err == nil && b.cacheEnd >= 0 && fi.Size()-b.cacheEnd > cacheEvery {
			// Much log past index.cache: read the whole index once, which
			// writes a new cache, so that the next Puts and listings start
			// from it; then let it go (a purge's memory).
			s.idxMu.Lock()
			if s.idx == nil {
				s.loadIndexLocked()
				s.idx = nil
			}
			s.idxMu.Unlock()
		}
	}
	synced := false
	if len(files) > syncFSAbove {
		// One syncfs(2) flushed 5,000 files four times faster than fsyncs;
		// where there is none (macOS, Windows, FUSE), file by file.
		err := fsutil.SyncFS(s.root)
		if err != nil && !errors.Is(err, fsutil.ErrNoSyncFS) {
			return err
		}
		synced = err == nil
	}
	if !synced && len(files) > 0 {
		sort.Strings(files)
		if err := fsutil.SyncFiles(files, []string{s.path(blobsDir), s.path(metaDir)}); err != nil {
			return err
		}
	}
	if last != "" {
		return s.writeLastKey(last)
	}
	return nil
}

// appendOps writes the batch's index lines; the caller holds meta.lock. A
// key another process put into a pack since this batch looked becomes a
// "seen" line: its frame in this batch's pack stays dead until a repack.
func (b *Batch) appendOps(ops opList) error {
	s := b.s
	s.refreshIndex()
	since, err := b.keysSince()
	if err != nil {
		return err
	}
	now := s.now()
	var data []byte
	for i := 0; i < ops.n; i++ {
		op := ops.at(i)
		if !op.put {
			data = append(data, seenLine(op.key, now, op.pin, op.reason)...)
			continue
		}
		if since(op.meta.Key) {
			data = append(data, seenLine(op.meta.Key, now, op.meta.Pinned.Level, op.meta.Pinned.Reason)...)
			continue
		}
		data = append(data, putLine(&op.meta, op.loc, false)...)
	}
	return s.appendIndexLines(data, true)
}

// keysSince returns a test for keys put into packs by other processes
// since the batch read the index (its packPresence, or the whole index).
func (b *Batch) keysSince() (func(Key) bool, error) {
	s := b.s
	b.mu.Lock()
	p := b.pres
	b.pres = nil // the next use of the batch reads the index again
	b.cacheEnd = -1
	if p != nil {
		b.cacheEnd = p.start
	}
	b.mu.Unlock()
	s.idxMu.Lock()
	loaded := s.idx != nil
	s.idxMu.Unlock()
	if loaded || p == nil {
		return func(k Key) bool { _, ok, _ := s.packLookup(k); return ok }, nil
	}
	f, err := fsutil.OpenPrivate(s.packIndexPath(), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return func(Key) bool { return false }, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	st, err := fsutil.Fstat(f)
	if err != nil {
		return nil, err
	}
	if st.ID.Ino != p.ino {
		// Replaced since (only a repack does that, under the exclusive
		// lock a batch excludes): read it whole to be sure.
		return func(k Key) bool { _, ok, _ := s.packLookup(k); return ok }, nil
	}
	since := &packPresence{tail: map[Key]struct{}{}, off: p.off}
	if err := since.scan(f, st.Size); err != nil {
		return nil, err
	}
	return func(k Key) bool { _, ok := since.tail[k]; return ok }, nil
}

// Close releases what the batch holds (the store lock, open lock and
// index files) without making anything durable: after an error, when the
// batch's blobs will not be referenced. A pack not yet committed is
// removed. Commit closes the batch too; the next Put opens it again.
func (b *Batch) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pw != nil {
		b.pw.f.Close()
		os.Remove(b.pw.path)
		b.pw = nil
		b.ops, b.keys = opList{}, make(map[Key]int)
	}
	b.held.Unlock()
	for _, f := range []*os.File{b.metaF, b.index} {
		if f != nil {
			f.Close()
		}
	}
	b.held, b.metaF, b.index = nil, nil, nil
}

// hold takes the store's shared lock for the batch, once.
func (b *Batch) hold(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		return nil
	}
	l, err := b.s.lock(ctx, false)
	if err != nil {
		return err
	}
	b.held = l
	return nil
}

// lockMeta is Store.lockMeta on a meta.lock the batch keeps open.
func (b *Batch) lockMeta(ctx context.Context) (func(), error) {
	s := b.s
	s.metaMu.Lock()
	f, _, err := b.open(&b.metaF, s.path(metaLock), os.O_RDWR|os.O_CREATE)
	if err == nil {
		err = fsutil.Flock(ctx, f, s.path(metaLock), true, s.lockWait())
	}
	if err != nil {
		s.metaMu.Unlock()
		return nil, s.lockErr(err)
	}
	return func() { fsutil.Funlock(f); s.metaMu.Unlock() }, nil
}

// appendIndex writes a line of claude-context-manager's index.jsonl through the
// batch's open file.
func (b *Batch) appendIndex(line string) error {
	f, opened, err := b.open(&b.index, b.s.path(indexFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	if opened {
		privateIndex(f)
	}
	_, err = f.WriteString(line)
	return err
}

// open returns *fp, opening path into it first if needed, and whether it
// did.
func (b *Batch) open(fp **os.File, path string, flag int) (f *os.File, opened bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if *fp == nil {
		f, err := fsutil.OpenPrivate(path, flag)
		if err != nil {
			return nil, false, err
		}
		*fp, opened = f, true
	}
	return *fp, opened, nil
}

func (b *Batch) setLast(k Key) {
	b.mu.Lock()
	b.last = k
	b.mu.Unlock()
}

// write replaces path atomically: durably when b is nil, else without
// fsync, remembering the file for Commit.
func (b *Batch) write(path string, fn func(w io.Writer) error) error {
	if b == nil {
		return fsutil.WriteFile(path, fsutil.FileMode, fn)
	}
	if err := fsutil.WriteFileUnsynced(path, fsutil.FileMode, fn); err != nil {
		return err
	}
	b.mu.Lock()
	b.files[path] = struct{}{}
	b.mu.Unlock()
	return nil
}

// opList holds a batch's pending index lines in chunks: a purge of a 1 GB
// transcript stores 20,000 blobs, and one growing slice of them kept up to
// twice their size alive at each doubling.
type opList struct {
	chunks [][]batchOp
	n      int
}

// add appends op and returns its number.
func (l *opList) add(op batchOp) int {
	if l.n%opChunk == 0 {
		l.chunks = append(l.chunks, make([]batchOp, 0, opChunk))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, op)
	l.n++
	return l.n - 1
}

// at returns op number i.
func (l *opList) at(i int) *batchOp { return &l.chunks[i/opChunk][i%opChunk] }

const opChunk = 1024
