package bundle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/prune"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// NoteFormat names the bundle format; a bundle of another format is
// refused with the format it has.
const NoteFormat = "ccm-bundle/1"

// NotePath is the bundle's own record among its extra members.
const NotePath = archive.ExtraDir + "/bundle.json"

// Note is a bundle's own record: who made it, from which project root,
// and which stored content it carries.
type Note struct {
	Format   string    `json:"format"`
	CCM      string    `json:"ccm_version,omitempty"`
	Machine  string    `json:"machine,omitempty"`
	Exported time.Time `json:"exported_at"`
	// Root is the working directory the project folder is named after.
	Root  string `json:"project_root"`
	Blobs []Blob `json:"blobs"`
	// Missing are keys the stubs name whose content the store did not
	// have (pruned, or never there): those stubs stay stubs.
	Missing []string `json:"missing"`
}

// Blob is one stored content a bundle carries.
type Blob struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// BlobPath is the member that holds key's content.
func BlobPath(key ccm.Key) string {
	scheme, hex, _ := strings.Cut(string(key), ":")
	return archive.ExtraDir + "/" + scheme + "/" + hex
}

// KeyOfPath is BlobPath's inverse; false for any other member.
func KeyOfPath(p string) (ccm.Key, bool) {
	rest, ok := strings.CutPrefix(p, archive.ExtraDir+"/")
	if !ok {
		return "", false
	}
	scheme, hex, ok := strings.Cut(rest, "/")
	if !ok {
		return "", false
	}
	k, err := ccm.ParseKey(scheme + ":" + hex)
	return k, err == nil
}

// Options of Make.
type Options struct {
	// Store holds the stubs' content; nil (or no store) leaves it out,
	// every key listed as missing.
	Store *ccm.Store
	// Redact, if set, replaces its patterns' matches in every file and
	// every stored content the bundle carries.
	Redact *Redactor
	// Snapshot copies the session's files before packing them (a live
	// session: what is being appended is left out, up to its last whole
	// line). Redact implies it.
	Snapshot bool
	// Stage is an empty folder for temporary files; the caller removes it.
	Stage   string
	Level   zstd.EncoderLevel
	Now     time.Time
	Machine string
	Version string
}

// Make writes a self-contained bundle of one session into
// o.Stage/out/<folder>/<id>.tar.zst (with its sidecar manifest): the
// archive format of sessions/archive, the session's files as they are (or
// redacted), the content of every stub they name as an extra member, and
// the note. It is read back and verified before it is returned; the
// session is not touched. src.Project must be the project root.
func Make(ctx context.Context, src archive.Source, o Options) (*archive.Packed, *Note, error) {
	note := NewNote(src.Project, o.Machine, o.Version, o.Now)
	blobDir := filepath.Join(o.Stage, "blobs")
	if err := fsutil.MkdirPrivate(blobDir); err != nil {
		return nil, nil, err
	}
	var redacted map[ccm.Key]string // new key -> its staged content
	if o.Redact != nil || o.Snapshot {
		var err error
		src, redacted, err = snapshot(ctx, src, o, blobDir, note)
		if err != nil {
			return nil, nil, err
		}
	}
	ao := archive.Options{Root: filepath.Join(o.Stage, "out"), Level: o.Level, Now: o.Now, KeepOriginals: true,
		Extra: extra(ctx, o.Store, blobDir, note, redacted, o.Redact != nil)}
	if o.Redact != nil {
		ao.Redacted = o.Redact.Note()
	}
	p, err := archive.Pack(ctx, src, ao)
	if err != nil {
		return nil, nil, err
	}
	return p, note, nil
}

// NewNote starts a bundle's note.
func NewNote(root, machine, version string, now time.Time) *Note {
	return &Note{Format: NoteFormat, CCM: version, Machine: machine, Exported: now.UTC(), Root: root, Blobs: []Blob{}, Missing: []string{}}
}

// Contents is archive.Options.Extra for a session's own files: the
// content of every key they name, copied out of st into dir (a key st
// lacks is listed in the note as missing), then the note.
func Contents(ctx context.Context, st *ccm.Store, dir string, note *Note) func([]string) ([]archive.Member, error) {
	return extra(ctx, st, dir, note, nil, false)
}

// extra gives the stored content and the note as extra members; with a
// redaction the content is the redacted copies, by their new keys.
func extra(ctx context.Context, st *ccm.Store, dir string, note *Note, redacted map[ccm.Key]string, redacting bool) func([]string) ([]archive.Member, error) {
	return func(refs []string) ([]archive.Member, error) {
		var out []archive.Member
		seen := map[ccm.Key]bool{}
		for _, r := range refs {
			key, err := ccm.ParseKey(r)
			if err != nil {
				continue
			}
			seen[key] = true
			path := redacted[key]
			if path == "" && !redacting {
				if path, err = fetch(ctx, st, key, dir); err != nil {
					note.Missing = append(note.Missing, string(key))
					continue
				}
			}
			if path == "" {
				continue // listed missing by the snapshot
			}
			fi, err := os.Stat(path)
			if err != nil {
				return nil, err
			}
			note.Blobs = append(note.Blobs, Blob{Key: string(key), Path: BlobPath(key), Size: fi.Size()})
			out = append(out, archive.Member{Path: BlobPath(key), Size: fi.Size(), MTime: note.Exported,
				Open: func() (io.ReadCloser, error) { return os.Open(path) }})
		}
		for key := range redacted {
			if !seen[key] {
				return nil, errors.New("--redact: a pattern matched a store key in a stub: its content would be lost (make the pattern more specific)")
			}
		}
		sort.Strings(note.Missing)
		data, err := json.MarshalIndent(note, "", "  ")
		if err != nil {
			return nil, err
		}
		data = append(data, '\n')
		out = append(out, archive.Member{Path: NotePath, Size: int64(len(data)), MTime: note.Exported,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }})
		return out, nil
	}
}

// fetch copies key's content out of the store into dir (verified as it
// is read) and returns the file.
func fetch(ctx context.Context, st *ccm.Store, key ccm.Key, dir string) (string, error) {
	if st == nil || !st.Exists() {
		return "", ccm.ErrNotFound
	}
	rc, _, err := st.Open(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	path := filepath.Join(dir, strings.ReplaceAll(string(key), ":", "-"))
	err = fsutil.WriteFileUnsynced(path, fsutil.FileMode, func(w io.Writer) error {
		_, err := io.Copy(w, rc)
		return err
	})
	return path, err
}

// snapshot copies the session's files into o.Stage/cfg, with the same
// names relative to it, modes and mtimes; with a redactor every file and
// every stored content the transcripts name is redacted, and a stub's key
// becomes its redacted content's. It returns the source of the copy and
// the redacted contents by their new keys.
func snapshot(ctx context.Context, src archive.Source, o Options, blobDir string, note *Note) (archive.Source, map[ccm.Key]string, error) {
	cfg := filepath.Join(o.Stage, "cfg")
	files, dirs := src.Files()
	var redacted map[ccm.Key]string
	var keys *strings.Replacer
	if o.Redact != nil {
		refs := &prune.KeyCollector{}
		for _, f := range files {
			if strings.Contains(filepath.Base(f.Path), ".jsonl") {
				if err := copyFile(f.Path, refs); err != nil {
					return src, nil, err
				}
			}
		}
		redacted = map[ccm.Key]string{}
		var pairs []string
		for k := range refs.Refs {
			key := ccm.Key(k)
			raw, err := fetch(ctx, o.Store, key, blobDir)
			if err != nil {
				note.Missing = append(note.Missing, string(key))
				continue
			}
			nk, path, err := redactBlob(o.Redact, raw, blobDir)
			os.Remove(raw)
			if err != nil {
				return src, nil, err
			}
			redacted[nk] = path
			pairs = append(pairs, string(key), string(nk))
		}
		keys = strings.NewReplacer(pairs...)
	}
	mapped := map[string]sessions.File{}
	for _, f := range files {
		rel, err := filepath.Rel(src.ConfigDir, f.Path)
		if err != nil {
			return src, nil, err
		}
		dest := filepath.Join(cfg, rel)
		if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
			return src, nil, err
		}
		jsonl := strings.Contains(filepath.Base(f.Path), ".jsonl")
		if err := copySnapshot(f, dest, jsonl, o.Redact, keys); err != nil {
			return src, nil, err
		}
		fi, err := os.Lstat(dest)
		if err != nil {
			return src, nil, err
		}
		mapped[f.Path] = sessions.File{Path: dest, Size: fi.Size(), ModTime: fi.ModTime(), Mode: fi.Mode(), ID: fsutil.IDOf(fi)}
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first: a child's mtime is set before its parent's
		rel, _ := filepath.Rel(src.ConfigDir, dirs[i])
		dest := filepath.Join(cfg, rel)
		fsutil.MkdirPrivate(dest)
		if fi, err := os.Lstat(dirs[i]); err == nil {
			os.Chmod(dest, fi.Mode().Perm()|0o700)
			os.Chtimes(dest, fi.ModTime(), fi.ModTime())
		}
	}
	ss := *src.Session
	mapAll := func(fs []sessions.File) []sessions.File {
		out := make([]sessions.File, len(fs))
		for i, f := range fs {
			out[i] = mapped[f.Path]
		}
		return out
	}
	mapDirs := func(ds []string) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			rel, _ := filepath.Rel(src.ConfigDir, d)
			out[i] = filepath.Join(cfg, rel)
		}
		return out
	}
	ss.Main = mapped[ss.Main.Path]
	ss.Dir = filepath.Dir(ss.Main.Path)
	ss.Companion, ss.Legacy, ss.Backups = mapAll(ss.Companion), mapAll(ss.Legacy), mapAll(ss.Backups)
	ss.CompanionDirs = mapDirs(ss.CompanionDirs)
	out := src
	out.ConfigDir, out.Session = cfg, &ss
	out.Related, out.RelDirs = mapAll(src.Related), mapDirs(src.RelDirs)
	return out, redacted, nil
}

// copyFile streams a file into w.
func copyFile(path string, w io.Writer) error {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// copySnapshot copies one file: a transcript up to its last whole line
// (a record being appended is not part of the snapshot), with store keys
// replaced and matches redacted when asked; its mode and mtime are kept.
func copySnapshot(f sessions.File, dest string, jsonl bool, red *Redactor, keys *strings.Replacer) error {
	in, err := fsutil.OpenRegular(f.Path)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	var src io.Reader = in
	if jsonl {
		src = wholeLines(in)
	}
	if keys != nil && jsonl {
		src = replaceLines(src, keys)
	}
	err = fsutil.WriteFileUnsynced(dest, fi.Mode().Perm()|0o600, func(w io.Writer) error {
		if red != nil {
			return red.Copy(w, src, jsonl)
		}
		_, err := io.Copy(w, src)
		return err
	})
	if err != nil {
		return err
	}
	return os.Chtimes(dest, fi.ModTime(), fi.ModTime())
}

// wholeLines reads r up to its last '\n'.
func wholeLines(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err == nil {
				if _, werr := pw.Write(line); werr != nil {
					pr.CloseWithError(werr)
					return
				}
				continue
			}
			if err == io.EOF {
				pw.Close() // a last line without '\n' is being written: left out
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}()
	return pr
}

// replaceLines applies rep to every line of r.
func replaceLines(r io.Reader, rep *strings.Replacer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if len(line) > 0 {
				if strings.Contains(line, "sha256:") || strings.Contains(line, "b2s:") {
					line = rep.Replace(line)
				}
				if _, werr := io.WriteString(pw, line); werr != nil {
					pr.CloseWithError(werr)
					return
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// redactBlob redacts one stored content (a file) into dir, named by its
// new key, and returns the key.
func redactBlob(red *Redactor, path, dir string) (ccm.Key, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var buf bytes.Buffer
	if err := red.Copy(&buf, bytes.NewReader(data), false); err != nil {
		return "", "", fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	key := ccm.KeyOf(buf.Bytes())
	out := filepath.Join(dir, "redacted-"+key.Hex())
	err = fsutil.WriteFileUnsynced(out, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
	return key, out, err
}
