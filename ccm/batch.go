package ccm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	index *os.File     // index.jsonl (claude-context-manager's log), appended to
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
