package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/tar"
	"ccm/prune"
)

// contentInMemory is the size up to which a blob is read whole before it
// is written (or stored): a blob the store cannot read back whole is then
// left out (its stubs stay stubs) instead of failing the archive. Larger
// blobs stream; blobs a purge stores are a line's value, rarely larger.
const contentInMemory = 16 << 20

// maxUnsized bounds a blob whose size the store does not know (a blob file
// without metadata), which is read whole to learn it.
const maxUnsized = 1 << 30

// maxLegacyContent bounds content under a b2s key, which the store takes
// only whole (no streaming put computes a b2s key). The older tool that
// wrote such keys stored tool outputs, far smaller.
const maxLegacyContent = 256 << 20

// keyFinder watches the bytes of transcripts and content for store keys:
// every key mentioned (refs, kept for prune) and the keys of stubs.
type keyFinder struct {
	refs  prune.KeyCollector
	stubs stub.KeyScanner
}

func (f *keyFinder) Write(p []byte) (int, error) {
	f.refs.Write(p)
	f.stubs.Write(p)
	return len(p), nil
}

// end marks the end of one file: a stub is never split between two.
func (f *keyFinder) end() { f.stubs.Flush() }

// writeContent writes the content of every key the files mention that the
// store holds, and of every key that content mentions in turn, as members
// store/<hex>, and lists them in m (Content, Refs, Missing). Each content
// is scanned with a finder of its own, so that only the keys it adds are
// looked at (a session has thousands of contents, most of them with no
// key inside).
func writeContent(ctx context.Context, tw *tar.Writer, st *ccm.Store, keys *keyFinder, m *Manifest, now time.Time, buf []byte) error {
	refs, stubs := keys.refs.Refs, keys.stubs.Keys
	if refs == nil {
		refs = prune.Refs{}
	}
	if stubs == nil {
		stubs = map[ccm.Key]struct{}{}
	}
	done := map[ccm.Key]bool{}
	var queue []ccm.Key
	enqueue := func(f *keyFinder) {
		var add []ccm.Key
		for _, set := range []map[ccm.Key]struct{}{f.refs.Refs, f.stubs.Keys} {
			for k := range set {
				if !done[k] {
					done[k] = true
					add = append(add, k)
				}
			}
		}
		for k := range f.refs.Refs {
			refs[k] = struct{}{}
		}
		for k := range f.stubs.Keys {
			stubs[k] = struct{}{}
		}
		sort.Slice(add, func(i, j int) bool { return add[i] < add[j] })
		queue = append(queue, add...)
	}
	enqueue(keys)
	for len(queue) > 0 && st != nil {
		k := queue[0]
		queue = queue[1:]
		if err := ctx.Err(); err != nil {
			return err
		}
		inner := &keyFinder{}
		c, err := copyContent(ctx, tw, st, k, inner, now, buf)
		if err != nil {
			return err
		}
		if c != nil {
			m.Content = append(m.Content, *c)
			m.ContentBytes += c.Size
		}
		inner.end()
		enqueue(inner)
	}
	for k := range refs {
		m.Refs = append(m.Refs, string(k))
	}
	sort.Strings(m.Refs)
	have := map[string]bool{}
	for _, c := range m.Content {
		have[c.Key] = true
	}
	for k := range stubs {
		if !have[string(k)] {
			m.Missing = append(m.Missing, string(k))
		}
	}
	sort.Strings(m.Missing)
	sort.Slice(m.Content, func(i, j int) bool { return m.Content[i].Key < m.Content[j].Key })
	return nil
}

// copyContent writes key's content as a member, or returns nil when the
// store does not hold it (or holds only a damaged copy of a small blob).
func copyContent(ctx context.Context, tw *tar.Writer, st *ccm.Store, k ccm.Key, keys *keyFinder, now time.Time, buf []byte) (*Content, error) {
	rc, meta, err := st.Export(ctx, k)
	if errors.Is(err, ccm.ErrNotFound) || errors.Is(err, ccm.ErrNoStore) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store content %s: %w", k, err)
	}
	defer rc.Close()
	c := &Content{Key: string(k), Size: meta.BytesUncompressed, Source: meta.Source}
	if meta.Pinned.Level != ccm.PinNone {
		c.Pin, c.PinReason = meta.Pinned.Level.String(), meta.Pinned.Reason
	}
	var r io.Reader = rc
	if c.Size <= contentInMemory {
		// Whole and verified before a byte is written.
		data, err := io.ReadAll(io.LimitReader(rc, maxUnsized+1))
		switch {
		case errors.Is(err, ccm.ErrCorrupt):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("store content %s: %w", k, err)
		case len(data) > maxUnsized:
			return nil, fmt.Errorf("store content %s: larger than %d bytes", k, int64(maxUnsized))
		}
		c.Size = int64(len(data))
		r = bytes.NewReader(data)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ContentPath(k), Mode: 0o600, Size: c.Size, ModTime: now, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	// A sha256 key is the content's SHA-256, which the store's reader
	// checks: only a b2s key's content is hashed here.
	h := sha256.New()
	w := io.MultiWriter(tw, keys)
	if k.IsLegacy() {
		w = io.MultiWriter(tw, h, keys)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(r, c.Size), buf)
	if err == nil && n != c.Size {
		err = fmt.Errorf("%d bytes, its metadata says %d", n, c.Size)
	}
	if err == nil {
		// The store's reader checks the key at the end of the content.
		_, err = io.Copy(io.Discard, r)
	}
	if err != nil {
		return nil, fmt.Errorf("store content %s: %w (nothing archived: ccm cache verify checks the store)", k, err)
	}
	c.SHA256 = k.Hex()
	if k.IsLegacy() {
		c.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return c, nil
}

// contentSink puts an archive's content into the store through one batch,
// as unarchive reads it. Content over contentInMemory is stored on its own
// (streamed, and durable at once).
type contentSink struct {
	st    *ccm.Store
	batch *ccm.Batch
	mu    sync.Mutex
	keys  []ccm.Key
}

func newContentSink(st *ccm.Store) *contentSink {
	return &contentSink{st: st, batch: st.NewBatch()}
}

// put stores one content member; content that does not match its key
// is errBadContent.
func (s *contentSink) put(ctx context.Context, c Content, r io.Reader) error {
	k := ccm.Key(c.Key)
	pin, _ := ccm.ParsePinLevel(c.Pin)
	if c.Size > contentInMemory && !k.IsLegacy() {
		got, _, err := s.st.PutReader(ctx, r, c.Source, pin, c.PinReason)
		if err != nil {
			return err
		}
		if got != k {
			return errBadContent // stored under its own key: harmless, unreferenced
		}
	} else {
		if c.Size > maxLegacyContent {
			return fmt.Errorf("content %s: %d bytes under a b2s key, more than unarchive reads into memory", k, c.Size)
		}
		data, err := io.ReadAll(io.LimitReader(r, c.Size+1))
		if err != nil {
			return err
		}
		if int64(len(data)) != c.Size {
			return errBadContent
		}
		if err := s.batch.PutChecked(ctx, k, data, c.Source, pin, c.PinReason); err != nil {
			if errors.Is(err, ccm.ErrCorrupt) {
				return errBadContent
			}
			return err
		}
	}
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
	return nil
}

// commit makes the batch durable, then reads every stored key back.
func (s *contentSink) commit() error {
	if err := s.batch.Commit(); err != nil {
		return fmt.Errorf("store the archive's content: %w", err)
	}
	for _, k := range s.keys {
		if err := s.st.Verify(k); err != nil {
			return fmt.Errorf("store the archive's content: %w", err)
		}
	}
	return nil
}

// close gives up a batch not committed: nothing of it becomes visible.
func (s *contentSink) close() { s.batch.Close() }
