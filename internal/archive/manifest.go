// Package archive moves whole Claude Code sessions into compressed,
// verified archives and back, byte for byte with their modes and mtimes.
//
// Format: one archive per session, <root>/<project folder>/<session>.tar.zst:
// a POSIX tar stream (PAX headers, so mtimes keep their nanoseconds) in one
// zstd stream, readable by `tar --zstd -xf`. Member names are relative to
// the Claude config dir (projects/<folder>/<id>.jsonl, projects/<folder>/<id>/
// subagents/..., file-history/<id>/..., todos/<id>-agent-*.json, ...). The
// last member, MANIFEST.json, lists every file with its mode, mtime, size
// and SHA-256, every folder with its mode and mtime, and the store keys the
// transcripts reference. Beside the archive, <session>.manifest.json holds
// the same manifest plus the archive's own size and SHA-256, so listings
// read it without unpacking, and ccm prune keeps the referenced blobs.
//
// One archive per session (not per project and month) because a session
// is the unit everything else works on: it is archived only when it is
// not live, restored by its id, verified and removed on its own, and a
// failure (a full disk, a live write) affects that session only. Small
// sessions compress a little worse alone; transcripts are large and
// repetitive enough that this costs little.
package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Format names the archive format in manifests.
const Format = "ccm-archive/1"

// ManifestName is the last member of every archive.
const ManifestName = "MANIFEST.json"

// Suffixes of the archive and its sidecar manifest.
const (
	Ext         = ".tar.zst"
	ManifestExt = ".manifest.json"
)

// Entry is one file or folder in an archive.
type Entry struct {
	Path   string      `json:"path"` // relative to the config dir, slash-separated
	Mode   fs.FileMode `json:"mode"` // permission bits
	MTime  time.Time   `json:"mtime"`
	Size   int64       `json:"size,omitempty"`
	SHA256 string      `json:"sha256,omitempty"` // hex, files only
}

// Manifest describes one archived session.
type Manifest struct {
	Format       string    `json:"format"`
	Session      string    `json:"session"`
	Folder       string    `json:"folder"`
	Project      string    `json:"project"`
	Title        string    `json:"title,omitempty"`
	Prompt       string    `json:"first_prompt,omitempty"`
	Records      int64     `json:"records"`
	Context      int64     `json:"context_tokens"`
	Created      time.Time `json:"archived_at"`
	LastModified time.Time `json:"last_modified"` // the main transcript's mtime
	Bytes        int64     `json:"bytes"`         // files' total size
	Files        []Entry   `json:"files"`
	Dirs         []Entry   `json:"dirs"`
	// Refs are the CCM store keys the archived files mention.
	Refs []string `json:"refs"`
	// Redacted names the patterns whose matches were replaced in the
	// files before they were archived (an exported bundle's).
	Redacted []string `json:"redacted,omitempty"`
	// ArchiveBytes and ArchiveSHA256 describe the archive file; only the
	// sidecar has them (the archive cannot hold its own hash).
	ArchiveBytes  int64  `json:"archive_bytes,omitempty"`
	ArchiveSHA256 string `json:"archive_sha256,omitempty"`
}

// Transcript is the main transcript's entry path.
func (m *Manifest) Transcript() string {
	return "projects/" + m.Folder + "/" + m.Session + ".jsonl"
}

// Paths of an archive and its sidecar under root.
func ArchivePath(root, folder, id string) string {
	return filepath.Join(root, folder, id+Ext)
}

// SidecarPath is the sidecar manifest of an archive.
func SidecarPath(archive string) string {
	return strings.TrimSuffix(archive, Ext) + ManifestExt
}

// ErrCorrupt marks an archive that fails verification.
var ErrCorrupt = errors.New("archive is corrupt or truncated")

// ReadSidecar reads an archive's sidecar manifest.
func ReadSidecar(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseManifest reads a manifest's JSON (a sidecar's, or one read from
// object storage).
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest is not valid JSON", ErrCorrupt)
	}
	if m.Format != Format || m.Session == "" || m.Folder == "" {
		return nil, fmt.Errorf("not a %s manifest", Format)
	}
	return &m, nil
}

// Listed is an archive found by List.
type Listed struct {
	Path     string
	Manifest *Manifest
	Err      error
}

// List finds the archives under root (root/<folder>/*.tar.zst) and reads
// their sidecar manifests, never the archives. A missing root has none.
func List(root string) ([]Listed, error) {
	folders, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, d := range folders {
		if !d.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			out = append(out, Listed{Path: filepath.Join(root, d.Name()), Err: err})
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), Ext) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(root, d.Name(), e.Name())
			m, err := ReadSidecar(SidecarPath(p))
			out = append(out, Listed{Path: p, Manifest: m, Err: err})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// safeRel checks that an entry path stays inside the config dir.
func safeRel(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, "\x00") {
		return fmt.Errorf("%w: unsafe member name %q", ErrCorrupt, p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || part == "" {
			return fmt.Errorf("%w: unsafe member name %q", ErrCorrupt, p)
		}
	}
	return nil
}
