package search

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/tar"
	"ccm/sessions/archive"
)

// maxCarried bounds one content read back from an archive's spill: the
// extractor holds a stub's content whole, as it does the store's.
const maxCarried = 256 << 20

// carried is the stored content an archive carries (its store/<hex>
// members) for the stubs the store no longer has: copied out of the
// archive's stream into one temp file beside the part (0600, in the
// index's 0700 folder), each member verified against its key, and removed
// once the part is written.
type carried struct {
	f  *os.File
	at map[string][2]int64 // key: offset and size in f
}

// wanted lists the content an archive's manifest says it carries and the
// store does not have (has nil: no store, all of it), by its member name.
func wanted(m *archive.Manifest, has func(key string) bool) map[string]ccm.Key {
	want := map[string]ccm.Key{}
	for _, c := range m.Content {
		k, err := ccm.ParseKey(c.Key)
		if err != nil || c.Size > maxCarried || has != nil && has(c.Key) {
			continue
		}
		want[archive.ContentPath(k)] = k
	}
	return want
}

// spillCarried reads the archive once and copies the members of want
// into a temp file beside dst. A member that does not hash to its key is
// left out: its stubs stay stubs in the part.
func spillCarried(ctx context.Context, archivePath, dst string, want map[string]ccm.Key) (c *carried, err error) {
	f, err := os.Open(archivePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(f, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", archivePath, archive.ErrCorrupt, err)
	}
	defer dec.Close()
	tmp, err := fsutil.CreateTemp(dst)
	if err != nil {
		return nil, err
	}
	c = &carried{f: tmp, at: map[string][2]int64{}}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	tr := tar.NewReader(dec)
	var off int64
	for len(c.at) < len(want) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", archivePath, archive.ErrCorrupt, err)
		}
		k, ok := want[h.Name]
		if !ok || h.Typeflag != tar.TypeReg || h.Size > maxCarried || !strings.HasPrefix(h.Name, archive.ContentDir) {
			continue
		}
		sum := k.NewHash()
		n, err := io.Copy(io.MultiWriter(tmp, sum), io.LimitReader(tr, maxCarried+1))
		if err != nil {
			return nil, err
		}
		if n == h.Size && k.Matches(sum.Sum(nil)) {
			c.at[string(k)] = [2]int64{off, n}
		}
		off += n
	}
	return c, nil
}

// get returns a key's content, if the archive carried it.
func (c *carried) get(key string) ([]byte, bool) {
	at, ok := c.at[key]
	if !ok {
		return nil, false
	}
	b := make([]byte, at[1])
	if _, err := c.f.ReadAt(b, at[0]); err != nil {
		return nil, false
	}
	return b, true
}

func (c *carried) close() {
	c.f.Close()
	os.Remove(c.f.Name())
}

// errNotCarried: neither the store nor the archive has a stub's content.
var errNotCarried = errors.New("content is neither in the store nor in the archive")

// withCarried is o resolving a stub from the store first, then from the
// content the archive carries.
func (o PartOptions) withCarried(c *carried) PartOptions {
	store := o.Resolve
	o.Resolve = func(key string) ([]byte, error) {
		if store != nil {
			if b, err := store(key); err == nil {
				return b, nil
			}
		}
		if b, ok := c.get(key); ok {
			return b, nil
		}
		return nil, errNotCarried
	}
	return o
}
