package ccm

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// maxLegacyPut bounds the content of a b2s key read into memory by PutAs.
const maxLegacyPut = 1 << 30

// PutAs stores content that comes from outside the store under the key a
// stub names (an exported bundle's or an archive's copy of a blob), only
// if it hashes to that key: content that does not is refused with an
// error wrapping ErrCorrupt. A sha256 key is stored as by PutReader; a b2s
// key (written by the Python tool's successor) is checked with its own
// hash and stored under it. It reports whether the blob was new.
func (s *Store) PutAs(ctx context.Context, key Key, r io.Reader, src Source) (added bool, err error) {
	if _, err := ParseKey(string(key)); err != nil {
		return false, err
	}
	had := false
	if s.Exists() {
		if err := s.Verify(key); err == nil {
			had = true
		}
	}
	if !key.IsLegacy() {
		got, _, err := s.PutReader(ctx, r, src, PinNone, "")
		if err != nil {
			return false, err
		}
		if got != key {
			return false, fmt.Errorf("%s: %w: the content hashes to %s", key, ErrCorrupt, got)
		}
		return !had, nil
	}
	content, err := io.ReadAll(io.LimitReader(r, maxLegacyPut+1))
	if err != nil {
		return false, err
	}
	if len(content) > maxLegacyPut {
		return false, fmt.Errorf("%s: more than %d bytes", key, maxLegacyPut)
	}
	h := key.newHash()
	h.Write(content)
	if !key.matches(h.Sum(nil)) {
		return false, fmt.Errorf("%s: %w: the content does not hash to its key", key, ErrCorrupt)
	}
	if _, err := s.put(ctx, key, bytes.Clone(content), src, PinNone, "", nil); err != nil {
		return false, err
	}
	return !had, nil
}
