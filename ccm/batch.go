package ccm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"ccm/internal/fsutil"
)

// Batch stores many blobs with one durability barrier. Every new blob of a
// batch becomes one frame of a single new append-only pack file
// (packs/<id>.pack), compressed on the caller's goroutine (so two workers
// compress on two cores) and appended under a mutex; its index line waits
// in memory. Commit fsyncs the pack and packs/, then appends every index
// line in one write under meta.lock and fsyncs the index: after Commit
// returns nil, every Put of the batch is durable and readable; before,
// none is visible to readers, and a crash leaves at most a pack that no
// index line names (a repack removes it). A purge puts every blob of a
// transcript through one batch, commits, and only then replaces the
// transcript that references them.
//
// Content already in the store is not written again: a pack copy gets a
// "seen" line (access time, pin raised), a blob file of the layouts before
// packs has its metadata file updated as Store.Put does.
//
// A Batch is safe for concurrent use. It holds the store's shared lock from
// its first Put until Commit or Close; use Store.Hold to keep prune away
// until the transcript is in place.
type Batch struct {
	s    *Store
	mu   sync.Mutex
	pw   *packWriter // the batch's pack, created by the first new blob
	ops  opList      // index lines to append at Commit
	keys map[Key]int // key → its op
	// synced are the keys of new frames an earlier Sync made durable.
	synced map[Key]struct{}
	syncMu sync.Mutex          // held by Sync and Commit
	files  map[string]struct{} // metadata files of older blobs updated, for Commit
	last   Key                 // the latest Put, for last_key at Commit

	// pres says which keys may be in a pack, read once per batch: a purge
	// into a store of 100,000 blobs does not read the whole index.
	pres *packPresence
	// cacheEnd is where the log lines after index.cache began when the
	// batch read it; -1 when the batch read the whole index instead.
	cacheEnd int64

	held  *fsutil.Lock // the store's shared lock
	metaF *os.File     // meta.lock, flocked around each metadata update
	index *os.File     // index.jsonl (the Python tool's log), appended to
}

// batchOp is a pending index line: a new frame (put) or a store of content
// already in a pack (seen).
type batchOp struct {
	put    bool
	meta   Meta // put: the new blob's metadata
	loc    packLoc
	key    Key // seen
	pin    PinLevel
	reason string
}

// syncFSAbove is the number of files above which Commit flushes the whole
// filesystem at once instead of fsyncing each file (older blobs' metadata).
const syncFSAbove = 64

// NewBatch starts a batch of Puts.
func (s *Store) NewBatch() *Batch {
	return &Batch{s: s, files: make(map[string]struct{}), keys: make(map[Key]int), synced: make(map[Key]struct{})}
}

// Put stores content like Store.Put, deferring durability to Commit.
func (b *Batch) Put(ctx context.Context, content []byte, src Source, pin PinLevel, pinReason string) (Key, error) {
	key := KeyOf(content)
	return key, b.put(ctx, key, content, src, pin, pinReason)
}

// PutKeyed is Put for a caller that has just computed key as
// KeyOf(content) itself (a purge needs the key at once for the stub): the
// content is not hashed a second time.
func (b *Batch) PutKeyed(ctx context.Context, key Key, content []byte, src Source, pin PinLevel, pinReason string) error {
	return b.put(ctx, key, content, src, pin, pinReason)
}

// PutChecked stores content under key, a key from outside (an archive's
// list of its content), after checking that key names this content: a
// mismatch is an error wrapping ErrCorrupt and nothing is stored. Unlike
// Put it can store content under a b2s key.
func (b *Batch) PutChecked(ctx context.Context, key Key, content []byte, src Source, pin PinLevel, pinReason string) error {
	if _, err := ParseKey(string(key)); err != nil {
		return err
	}
	h := key.newHash()
	h.Write(content)
	if !key.matches(h.Sum(nil)) {
		return fmt.Errorf("%s: %w: content does not match its key", key, ErrCorrupt)
	}
	return b.put(ctx, key, content, src, pin, pinReason)
}

func (b *Batch) put(ctx context.Context, key Key, content []byte, src Source, pin PinLevel, reason string) error {
	s := b.s
	if err := s.checkPut(pin); err != nil {
		return err
	}
	if err := b.hold(ctx); err != nil {
		return err
	}
	if b.raise(key, pin, reason) {
		return nil
	}
	maybe, err := b.mayBeInPacks(key)
	if err != nil {
		return err
	}
	b.mu.Lock()
	if _, ok := b.synced[key]; ok {
		maybe = true
	}
	b.mu.Unlock()
	var files []BlobFile
	if maybe {
		files, err = s.findBlobs(key)
	} else {
		files, err = s.findFiles(key)
	}
	if err != nil {
		return err
	}
	write := func() error { return b.addFrame(key, content, src, pin, reason) }
	if len(files) == 0 {
		return write()
	}
	p := pending{key: key, size: int64(len(content)), lines: int64(bytes.Count(content, []byte{'\n'})), batch: b, packWrite: write}
	return s.commit(ctx, &p, src, pin, reason)
}

// mayBeInPacks is Store.mayBeInPacks with the batch's packPresence.
func (b *Batch) mayBeInPacks(key Key) (bool, error) {
	s := b.s
	s.idxMu.Lock()
	loaded := s.idx != nil
	s.idxMu.Unlock()
	if loaded {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pres == nil {
		p, err := s.newPresence()
		if err != nil {
			return false, err
		}
		b.pres = p
	}
	return b.pres.maybe(key), nil
}

// raise handles a key this batch has already stored: its pin only rises.
func (b *Batch) raise(key Key, pin PinLevel, reason string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.keys[key]
	if !ok {
		return false
	}
	op := b.ops.at(i)
	if op.put && pin > op.meta.Pinned.Level {
		op.meta.Pinned = PinInfo{Level: pin, Reason: reason, PinnedAt: b.s.now()}
	} else if !op.put && pin > op.pin {
		op.pin, op.reason = pin, reason
	}
	b.last = key
	return true
}

// addFrame compresses content and appends it to the batch's pack.
func (b *Batch) addFrame(key Key, content []byte, src Source, pin PinLevel, reason string) error {
	s := b.s
	codec, frame, release := encodeFrame(content, s.packCodec)
	defer release()
	if src.SessionPath != "" && !filepath.IsAbs(src.SessionPath) {
		if abs, err := filepath.Abs(src.SessionPath); err == nil {
			src.SessionPath = abs
		}
	}
	now := s.now()
	m := Meta{Key: key, CreatedAt: now, LastAccessAt: now, Source: src,
		BytesUncompressed: int64(len(content)), Lines: int64(bytes.Count(content, []byte{'\n'}))}
	if pin > PinNone {
		m.Pinned = PinInfo{Level: pin, Reason: reason, PinnedAt: now}
	}
	b.mu.Lock()
	if _, ok := b.keys[key]; ok {
		b.mu.Unlock()
		b.raise(key, pin, reason) // another goroutine stored it meanwhile
		return nil
	}
	defer b.mu.Unlock()
	if b.pw == nil {
		pw, err := s.newPackWriter()
		if err != nil {
			return err
		}
		b.pw = pw
	}
	loc, err := b.pw.add(codec, frame)
	if err != nil {
		return err
	}
	m.BytesCompressed, m.Compression = loc.clen, string(codec)
	b.keys[key] = b.ops.add(batchOp{put: true, meta: m, loc: loc})
	b.last = key
	return nil
}

// addSeen records a store of content already in a pack.
func (b *Batch) addSeen(key Key, pin PinLevel, reason string) {
	if b.raise(key, pin, reason) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys[key] = b.ops.add(batchOp{key: key, pin: pin, reason: reason})
	b.last = key
}

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

// appendIndex writes a line of the Python tool's index.jsonl through the
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

const opChunk = 1024

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
