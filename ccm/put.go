package ccm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"ccm/internal/fsutil"
)

// Put stores content and returns its key. It is atomic (a crash leaves
// either the whole blob or none), deduplicated by key, and safe to call
// from many goroutines and processes at once. It takes the store's shared
// lock itself and creates the layout on first use.
//
// For content already stored, the blob is verified (a corrupt or truncated
// copy, e.g. one claude-context-manager left after a crash, is replaced by this
// good content), its last access time is set to now, and its pin only ever
// rises: none → soft → hard. Neither the access count nor the index
// changes. src describes the first store only; a relative SessionPath is
// made absolute.
func (s *Store) Put(ctx context.Context, content []byte, src Source, pin PinLevel, pinReason string) (Key, error) {
	return s.put(ctx, KeyOf(content), content, src, pin, pinReason, nil)
}

// put stores content under key, which is KeyOf(content).
func (s *Store) put(ctx context.Context, key Key, content []byte, src Source, pin PinLevel, pinReason string, b *Batch) (Key, error) {
	if err := s.checkPut(pin); err != nil {
		return "", err
	}
	p := pending{key: key, size: int64(len(content)), lines: int64(bytes.Count(content, []byte{'\n'})), batch: b}
	p.write = func(dst *BlobFile) error { return s.writeBlobBytes(key, content, dst, b) }
	if err := s.commit(ctx, &p, src, pin, pinReason); err != nil {
		return "", err
	}
	return key, nil
}

// PutReader stores everything r yields, like Put, without holding it in
// memory. Content up to 4 MiB is read whole and stored as by Put. Larger
// content is hashed and compressed in one pass into a temp file in the
// store (raw content is never written out unless compression does not
// shrink it, and then it is decompressed from the temp file). It returns
// the key and the size.
func (s *Store) PutReader(ctx context.Context, r io.Reader, src Source, pin PinLevel, pinReason string) (Key, int64, error) {
	if err := s.checkPut(pin); err != nil {
		return "", 0, err
	}
	r = &ctxReader{ctx: ctx, r: r}
	head := make([]byte, inMemoryLimit+1)
	n, err := io.ReadFull(r, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		k, err := s.Put(ctx, head[:n], src, pin, pinReason)
		return k, int64(n), err
	}
	if err != nil {
		return "", 0, fmt.Errorf("read content: %w", err)
	}
	if err := s.ensureLayout(); err != nil {
		return "", 0, err
	}
	tmp, err := fsutil.CreateTemp(s.path(blobsDir, "stream"))
	if err != nil {
		return "", 0, fmt.Errorf("store: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name()) // no-op once renamed into place
	}()
	h := sha256.New()
	lc := &lineCounter{}
	in := io.TeeReader(io.MultiReader(bytes.NewReader(head), r), io.MultiWriter(h, lc))
	comp := s.comp
	var size, stored int64
	if comp == None {
		size, err = io.Copy(tmp, in)
		stored = size
	} else {
		cr := &countReader{r: in}
		stored, err = compressTo(tmp, cr, -1, comp)
		size = cr.n
	}
	if err != nil {
		return "", 0, fmt.Errorf("store: %w", err)
	}
	key := Key(prefixSHA256 + fmt.Sprintf("%x", h.Sum(nil)))
	p := pending{key: key, size: size, lines: lc.n}
	p.write = func(dst *BlobFile) error {
		if comp != None && stored >= size {
			// Did not shrink (already compressed data): store it raw, decoded
			// from the temp file.
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return err
			}
			rd, release, err := blobReader(tmp, comp)
			if err != nil {
				return err
			}
			defer release()
			path := s.path(blobsDir, key.Hex()+None.Ext())
			if err := fsutil.WriteFile(path, fsutil.FileMode, func(w io.Writer) error {
				_, err := io.Copy(w, rd)
				return err
			}); err != nil {
				return err
			}
			*dst = BlobFile{Path: path, Compression: None, Size: size}
			return nil
		}
		return s.renameTemp(tmp, key, comp, stored, dst)
	}
	if err := s.commit(ctx, &p, src, pin, pinReason); err != nil {
		return "", 0, err
	}
	return key, size, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (s *Store) checkPut(pin PinLevel) error {
	if s.compErr != nil {
		return s.compErr
	}
	if pin < PinNone || pin > PinHard {
		return fmt.Errorf("invalid pin level %d", int(pin))
	}
	return nil
}

// pending is content about to be committed: its facts and how to write
// its blob when the store does not hold a good copy yet.
type pending struct {
	key   Key
	size  int64
	lines int64
	write func(dst *BlobFile) error
	batch *Batch // nil: every write is durable before Put returns
	// packWrite, for a batch, adds the content to the batch's pack when
	// the store holds no good copy.
	packWrite func() error
}

// recordSeen records that content already in a pack was stored again: its
// access time, and its pin raised. Outside a batch it is durable at once.
func (s *Store) recordSeen(ctx context.Context, key Key, pin PinLevel, reason string, b *Batch) error {
	if b != nil {
		b.addSeen(key, pin, reason)
		return nil
	}
	if err := s.appendLocked(ctx, seenLine(key, s.now(), pin, reason), true); err != nil {
		return err
	}
	return s.writeLastKey(key)
}

// appendLocked appends index lines under meta.lock and reads them back
// into this process's view of the index.
func (s *Store) appendLocked(ctx context.Context, lines []byte, sync bool) error {
	unlock, err := s.lockMeta(ctx)
	if err != nil {
		return err
	}
	err = s.appendIndexLines(lines, sync)
	unlock()
	s.refreshIndex()
	return err
}

// commit runs under the shared lock: reuse or write the blob, then record
// the metadata, the index line and last_key.
func (s *Store) commit(ctx context.Context, p *pending, src Source, pin PinLevel, reason string) error {
	if p.batch != nil {
		if err := p.batch.hold(ctx); err != nil {
			return err
		}
	} else {
		l, err := s.lock(ctx, false)
		if err != nil {
			return err
		}
		defer l.Unlock()
	}
	existing, err := s.findBlobs(p.key)
	if err != nil {
		return fmt.Errorf("store %s: %w", p.key, err)
	}
	var good *BlobFile
	var corrupt []BlobFile
	for i := range existing {
		err := s.verifyFile(p.key, existing[i])
		if err == nil {
			good = &existing[i]
			break
		}
		if !errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("store %s: %w", p.key, err)
		}
		corrupt = append(corrupt, existing[i])
	}
	if good == nil && p.packWrite != nil {
		// A batch: the content becomes a frame of the batch's pack.
		return p.packWrite()
	}
	if good != nil && good.Packed {
		return s.recordSeen(ctx, p.key, pin, reason, p.batch)
	}
	var replacedPack bool
	for _, c := range corrupt {
		replacedPack = replacedPack || c.Packed
	}
	if good == nil {
		var bf BlobFile
		if err := p.write(&bf); err != nil {
			return fmt.Errorf("store %s: %w", p.key, err)
		}
		good = &bf
		// The good copy is durable now; the corrupt ones it replaces go.
		for _, c := range corrupt {
			if c.Path != bf.Path && !c.Packed {
				os.Remove(c.Path)
			}
		}
		if replacedPack {
			// The index forgets the corrupt frame; a repack reclaims it.
			if err := s.appendLocked(ctx, delLine(p.key, s.now(), "corrupt frame replaced by a good copy"), true); err != nil {
				return err
			}
		}
	}
	created, err := s.recordPut(ctx, p, *good, src, pin, reason)
	if err != nil {
		return err
	}
	if created {
		if err := s.appendIndex(p, src); err != nil {
			return err
		}
	}
	if p.batch != nil {
		p.batch.setLast(p.key) // written once, at Commit
		return nil
	}
	return s.writeLastKey(p.key)
}

// writeLastKey records the most recent store. last_key only serves "ccm
// cache last" and "pin --last": a crash may lose its latest update, never
// tear it, so it skips the two fsyncs.
func (s *Store) writeLastKey(k Key) error {
	if err := fsutil.WriteFileVolatile(s.path(lastKeyFile), fsutil.FileMode, []byte(string(k)+"\n")); err != nil {
		return fmt.Errorf("write last_key: %w", err)
	}
	return nil
}

// writeBlobBytes writes content as key's blob in the configured form:
// raw under 1 KiB or when compression does not shrink it.
func (s *Store) writeBlobBytes(key Key, content []byte, dst *BlobFile, b *Batch) error {
	n := int64(len(content))
	if n < minCompressSize || s.comp == None {
		return s.writeFile(key, None, content, dst, b)
	}
	if s.comp == Zstd && n <= inMemoryLimit {
		enc := encodeAll(content)
		defer releaseEncoded(enc)
		if int64(len(enc)) >= n {
			return s.writeFile(key, None, content, dst, b)
		}
		return s.writeFile(key, Zstd, enc, dst, b)
	}
	err := s.writeCompressed(key, bytes.NewReader(content), n, dst, b)
	if errors.Is(err, errNoShrink) {
		return s.writeFile(key, None, content, dst, b)
	}
	return err
}

// writeFile writes data atomically as key's blob in form c.
func (s *Store) writeFile(key Key, c Compression, data []byte, dst *BlobFile, b *Batch) error {
	path := s.path(blobsDir, key.Hex()+c.Ext())
	err := b.write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	*dst = BlobFile{Path: path, Compression: c, Size: int64(len(data))}
	return nil
}

// writeCompressed streams src (size bytes) through the configured
// compressor into key's blob. errNoShrink means nothing was written.
func (s *Store) writeCompressed(key Key, src io.Reader, size int64, dst *BlobFile, b *Batch) error {
	c := s.comp
	path := s.path(blobsDir, key.Hex()+c.Ext())
	var n int64
	err := b.write(path, func(w io.Writer) error {
		var err error
		n, err = compressTo(w, src, size, c)
		return err
	})
	if err != nil {
		return err
	}
	*dst = BlobFile{Path: path, Compression: c, Size: n}
	return nil
}

// renameTemp makes a fully written temp file key's blob in form c:
// fsync, rename, fsync of the directory.
func (s *Store) renameTemp(tmp *os.File, key Key, c Compression, size int64, dst *BlobFile) error {
	path := s.path(blobsDir, key.Hex()+c.Ext())
	if err := fsutil.Sync(tmp); err != nil {
		return err
	}
	if err := fsutil.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if err := fsutil.SyncDir(filepath.Dir(path)); err != nil {
		return err
	}
	*dst = BlobFile{Path: path, Compression: c, Size: size}
	return nil
}

// recordPut creates or updates key's metadata after a Put. It reports
// whether the metadata is new (the blob was not known before).
func (s *Store) recordPut(ctx context.Context, p *pending, bf BlobFile, src Source, pin PinLevel, reason string) (bool, error) {
	lockMeta := s.lockMeta
	if p.batch != nil {
		lockMeta = p.batch.lockMeta
	}
	unlock, err := lockMeta(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	now := s.now()
	m, path, err := s.readMeta(p.key)
	created := false
	switch {
	case err == nil:
		m.LastAccessAt = now
		if pin > m.Pinned.Level {
			m.Pinned = PinInfo{Level: pin, Reason: reason, PinnedAt: now}
		}
	case errors.Is(err, ErrNotFound):
		created = true
		if src.SessionPath != "" && !filepath.IsAbs(src.SessionPath) {
			if abs, err := filepath.Abs(src.SessionPath); err == nil {
				src.SessionPath = abs
			}
		}
		m = &Meta{Key: p.key, CreatedAt: now, LastAccessAt: now, Source: src}
		if pin > PinNone {
			m.Pinned = PinInfo{Level: pin, Reason: reason, PinnedAt: now}
		}
	default:
		return false, fmt.Errorf("store %s: %s: %w (move the file away to store this content again)", p.key, path, err)
	}
	// Facts about the blob on disk, which a rewritten blob may change.
	m.BytesUncompressed, m.Lines = p.size, p.lines
	m.Compression, m.BytesCompressed = string(bf.Compression), bf.Size
	if err := s.writeMeta(path, m, p.batch); err != nil {
		return false, err
	}
	return created, nil
}

// appendIndex adds claude-context-manager's audit line for a new blob. The index
// is a log, not the source of truth (meta/ is), so it is appended without
// fsync; several writers append whole lines with O_APPEND.
func (s *Store) appendIndex(p *pending, src Source) error {
	line := fmt.Sprintf(`{"ts":%s,"key":%s,"tool":%s,"exit":%d,"bytes":%d,"lines":%d}`+"\n",
		jstr(FormatTime(s.now())), jstr(string(p.key)), jstr(src.Tool()), src.ExitCode, p.size, p.lines)
	if p.batch != nil {
		if err := p.batch.appendIndex(line); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		return nil
	}
	path := s.path(indexFile)
	f, err := fsutil.OpenPrivate(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	privateIndex(f)
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// privateIndex makes an index.jsonl that ccm opened private:
// claude-context-manager left it world-readable, and it names tools and sizes.
func privateIndex(f *os.File) {
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(fsutil.FileMode)
	}
}

// lineCounter counts '\n' in what is written to it.
type lineCounter struct{ n int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// ctxReader stops a long copy when ctx is canceled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
