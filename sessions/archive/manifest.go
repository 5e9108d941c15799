// Package archive moves whole Claude Code sessions into compressed,
// verified, self-contained archives and back, byte for byte with their
// modes and mtimes.
//
// Format (docs/archive.md has the whole of it): one archive per session,
// <root>/<project folder>/<session>.tar.zst: a POSIX tar stream (PAX
// headers, so mtimes keep their nanoseconds) in one zstd stream, readable
// by `tar --zstd -xf`. Its members, in this order:
//
//   - the session's folders and files, named relative to the Claude config
//     dir (projects/<folder>/<id>.jsonl, projects/<folder>/<id>/subagents/...,
//     file-history/<id>/..., todos/<id>-agent-*.json, ...);
//   - store/<hex>: the content of the CCM store that the files reference
//     (every stub's, and what that content references in turn), the bytes
//     the store holds for the key, so that the archive needs no store;
//   - parts/<kind>/...: members of other kinds the manifest declares;
//   - MANIFEST.json, last: every file with its mode, mtime, size and
//     SHA-256, every folder, every content member with its key, size,
//     SHA-256, pin and source, every part, and the keys the files mention.
//
// Beside the archive, <session>.manifest.json holds the same manifest plus
// the archive's own size and SHA-256, so listings read it without
// unpacking, and ccm prune keeps the referenced blobs.
//
// An archive is input from outside: unarchive brings back only the paths
// of its own session (see scope.go) and the store content it lists, each
// verified, and nothing else.
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

	"ccm/ccm"
)

// Format names the archive format in manifests. FormatV1 archives
// (written before archives carried their content) are still read: their
// stubs depend on the store.
const (
	Format   = "ccm-archive/2"
	FormatV1 = "ccm-archive/1"
)

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
	// Refs are the CCM store keys the archived files mention, and those
	// the content they reference mentions in turn.
	Refs []string `json:"refs"`
	// Content is the store content the archive carries (format 2).
	Content []Content `json:"content,omitempty"`
	// ContentBytes is the content's total size.
	ContentBytes int64 `json:"content_bytes,omitempty"`
	// Missing are the keys of stubs whose content the store did not have
	// when the session was archived: they stay stubs.
	Missing []string `json:"missing_content,omitempty"`
	// Parts are members of other kinds (format 2).
	Parts []Part `json:"parts,omitempty"`
	// ArchiveBytes and ArchiveSHA256 describe the archive file; only the
	// sidecar has them (the archive cannot hold its own hash).
	ArchiveBytes  int64  `json:"archive_bytes,omitempty"`
	ArchiveSHA256 string `json:"archive_sha256,omitempty"`
	// Redacted: the files are not the session as it was, but a copy
	// with text replaced (a bundle of ccm export --redact). Such a copy
	// never replaces one that is not (remote.Upload).
	Redacted bool `json:"redacted,omitempty"`
}

// Content is one blob of the CCM store that an archive carries, as the
// member store/<hex of its key>: the content itself, uncompressed.
type Content struct {
	Key       string     `json:"key"`
	Size      int64      `json:"size"`
	SHA256    string     `json:"sha256"` // of the content, whatever the key's kind
	Pin       string     `json:"pin,omitempty"`
	PinReason string     `json:"pin_reason,omitempty"`
	Source    ccm.Source `json:"source"` // where the store says it came from
}

// Part is a member of a kind that a reader may not know (a search index of
// the session, say), declared so that it is verified like every member.
// A reader that does not know the kind skips it and never writes it
// anywhere; one that does decides what to do with it.
type Part struct {
	Kind string `json:"kind"`
	Path string `json:"path"` // parts/<kind>/...
	// Format is the format of the part's bytes, when its kind has one:
	// a reader that knows the kind and not the format refuses the
	// archive from its manifest, before it reads a member.
	Format string `json:"format,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// PartsDir is the folder of part members.
const PartsDir = "parts/"

// PartPath is the member name of a part of kind named name.
func PartPath(kind, name string) string { return PartsDir + kind + "/" + name }

// ContentDir is the folder of content members.
const ContentDir = "store/"

// ContentPath is the member name of a key's content.
func ContentPath(k ccm.Key) string { return ContentDir + k.Hex() }

// SelfContained reports whether the archive carries its stubs' content.
func (m *Manifest) SelfContained() bool { return m.Format != FormatV1 }

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

// ErrNewer marks a manifest of a format newer than this ccm reads.
var ErrNewer = errors.New("newer than this ccm reads")

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

// ParseManifest reads a manifest's JSON (a sidecar's, or one kept in
// object storage): a format this version reads, a session and a folder.
// What it lists is checked against the session's scope where the archive
// is read.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest is not valid JSON", ErrCorrupt)
	}
	if err := knownFormat(m.Format); err != nil {
		return nil, err
	}
	if m.Session == "" || m.Folder == "" {
		return nil, fmt.Errorf("%w: no session or folder in the manifest", ErrCorrupt)
	}
	return &m, nil
}

// knownFormat accepts the formats this version reads.
func knownFormat(f string) error {
	switch {
	case f == Format || f == FormatV1:
		return nil
	case strings.HasPrefix(f, "ccm-archive/"):
		return fmt.Errorf("archive format %s is %w (%s): update ccm", f, ErrNewer, Format)
	}
	return fmt.Errorf("%w: not a ccm archive manifest (format %q)", ErrCorrupt, f)
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
	folders, err := projectFolders(root)
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, dir := range folders {
		entries, err := os.ReadDir(dir)
		if err != nil {
			out = append(out, Listed{Path: dir, Err: err})
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), Ext) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			m, err := ReadSidecar(SidecarPath(p))
			out = append(out, Listed{Path: p, Manifest: m, Err: err})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// projectFolders lists the project folders of an archive root; a missing
// root has none.
func projectFolders(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range entries {
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, filepath.Join(root, d.Name()))
		}
	}
	return out, nil
}

// safeRel checks that an entry path stays inside the config dir.
func safeRel(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, "\x00") {
		return fmt.Errorf("%w: unsafe member name %q", ErrForeign, p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || part == "" {
			return fmt.Errorf("%w: unsafe member name %q", ErrForeign, p)
		}
	}
	return nil
}
