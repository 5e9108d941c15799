package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"ccm/internal/fsutil"
	"ccm/sessions/archive"
)

// Cache keeps what listings read of a target's manifests, by archive URL,
// so that the next listing reads only the manifests of archives it has not
// seen (ListKnown): an archive object never changes, its name carries its
// SHA-256. It keeps what a listing shows (the manifest without its dirs,
// refs, content and parts; each file's path and size), not what a download
// is checked against: a Listed from it is Lite, and Complete reads its
// manifest first. A cache that cannot be read is empty; one that cannot be
// written is only slower next time.
type Cache struct {
	path  string
	known map[string]*archive.Manifest
}

// cacheVersion is the cache file's format; another is read as empty.
const cacheVersion = 1

type cacheFile struct {
	Version   int                          `json:"version"`
	Manifests map[string]*archive.Manifest `json:"manifests"`
}

// OpenCache reads the cache of t's listings under dir (one file per
// server, bucket and prefix).
func OpenCache(dir string, t *Target) *Cache {
	sum := sha256.Sum256([]byte(t.Endpoint + "\x00" + t.String()))
	c := &Cache{path: filepath.Join(dir, hex.EncodeToString(sum[:12])+".json"), known: map[string]*archive.Manifest{}}
	fd, err := fsutil.OpenPrivate(c.path, os.O_RDONLY) // never through a symlink planted there
	if err != nil {
		return c
	}
	data, err := io.ReadAll(fd)
	fd.Close()
	if err != nil {
		return c
	}
	var f cacheFile
	if json.Unmarshal(data, &f) == nil && f.Version == cacheVersion && f.Manifests != nil {
		c.known = f.Manifests
	}
	return c
}

// Known is what the cache holds of the archive at url, when its size is
// the one the manifest gave (a Known for ListKnown).
func (c *Cache) Known(url string, size int64) (*archive.Manifest, bool) {
	m := c.known[url]
	if m == nil || m.ArchiveBytes != size {
		return nil, false
	}
	return m, true
}

// Save keeps what a listing shows of its archives, and nothing else: the
// archives no longer listed leave the cache.
func (c *Cache) Save(l *Listing) error {
	next := make(map[string]*archive.Manifest, len(l.Archives))
	changed := len(l.Archives) != len(c.known)
	for _, a := range l.Archives {
		if old := c.known[a.URL]; old != nil && old.ArchiveBytes == a.Size {
			next[a.URL] = old
			continue
		}
		next[a.URL] = shown(a.Manifest)
		changed = true
	}
	if !changed {
		return nil
	}
	c.known = next
	data, err := json.Marshal(cacheFile{Version: cacheVersion, Manifests: next})
	if err != nil {
		return err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(c.path)); err != nil {
		return err
	}
	// A cache lost in a crash is read as empty: no fsync.
	return fsutil.WriteFileUnsynced(c.path, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// shown is the part of a manifest a listing shows.
func shown(m *archive.Manifest) *archive.Manifest {
	s := *m
	s.Dirs, s.Refs, s.Content, s.Missing, s.Parts = nil, nil, nil, nil, nil
	s.Files = make([]archive.Entry, len(m.Files))
	for i, f := range m.Files {
		s.Files[i] = archive.Entry{Path: f.Path, Size: f.Size}
	}
	return &s
}
