package hooklib

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"ccm/hooklib/compress"
	"ccm/internal/fsutil"
)

// compressCacheDir holds compressed texts keyed by what determines them.
// Rules and CLAUDE.md rarely change, so a refresh finds its texts here and
// never loads the tokenizer (tens of milliseconds) on the hook path; only
// the first refresh after an edit pays for it.
func compressCacheDir(home string) string { return filepath.Join(home, "cache", "compress") }

// compressor returns the run's compressor for CONTEXT_REFRESH_COMPRESSION
// and CONTEXT_REFRESH_ABBREV_FILE. A bad level or abbreviation file is
// logged, never fatal: the level falls back to off, the dictionary to the
// built-in one.
func (h *Hook) compressor() *compress.Compressor {
	if h.comp != nil {
		return h.comp
	}
	raw := h.Config.String("CONTEXT_REFRESH_COMPRESSION")
	level, ok := compress.ParseLevel(raw)
	if !ok {
		h.Log.Printf("config: CONTEXT_REFRESH_COMPRESSION=%q is not off, light, standard or aggressive; compression off", raw)
	}
	var dict *compress.Dict
	if level > compress.Off {
		var err error
		if dict, err = compress.LoadDict(h.Config.Path("CONTEXT_REFRESH_ABBREV_FILE")); err != nil {
			h.Log.Printf("config: %v; using the built-in dictionary", err)
		}
	}
	h.comp = compress.New(compress.Options{Level: level, Dict: dict})
	return h.comp
}

// compress returns text compressed at the configured level, from the cache
// when it can.
func (h *Hook) compress(text string) string {
	c := h.compressor()
	if c.Level() == compress.Off || text == "" {
		return text
	}
	sum := sha256.Sum256([]byte(c.Fingerprint() + "\x00" + text))
	dir := compressCacheDir(h.Config.Home)
	path := filepath.Join(dir, hex.EncodeToString(sum[:20]))
	if data, err := fsutil.ReadRegular(path, maxReadFile); err == nil {
		return string(data)
	}
	r := c.Compress(text)
	if r.Err != nil {
		h.Log.Printf("%v; injecting uncompressed text", r.Err)
		return text
	}
	if err := fsutil.MkdirPrivate(dir); err == nil {
		if err := fsutil.WriteFileVolatile(path, fsutil.FileMode, []byte(r.Text)); err != nil {
			h.Log.Printf("compression cache: %v", err)
		}
	}
	return r.Text
}
