package bundle

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// NoteFormat names the format of a bundle's own record; a bundle whose
// record names another is refused with it.
const NoteFormat = "ccm-bundle/1"

// CheckFormat refuses, from its manifest alone (before any member is read
// and anything written), a bundle named name whose record is declared in
// a format this ccm does not read. Bundles of earlier ccm versions declare
// no format: their record's own is checked when it is read.
func CheckFormat(name string, m *archive.Manifest) error {
	for _, pt := range m.Parts {
		if pt.Kind == PartKind && pt.Format != "" && pt.Format != NoteFormat {
			return formatError(name, pt.Format)
		}
	}
	return nil
}

// formatError refuses a bundle whose record is in another format.
func formatError(name, format string) error {
	return fmt.Errorf("%s: a %s bundle, which this ccm does not read (it reads %s): update ccm", name, format, NoteFormat)
}

// The bundle's record is a declared part of the archive:
// parts/bundle/bundle.json.
const (
	PartKind = "bundle"
	PartName = "bundle.json"
)

// Note is a bundle's own record: who made it, and what was redacted. What
// it carries (files, stored content, the keys of stubs whose content the
// store did not have) is in the manifest, as in every archive.
type Note struct {
	Format   string    `json:"format"`
	CCM      string    `json:"ccm_version,omitempty"`
	Machine  string    `json:"machine,omitempty"`
	Exported time.Time `json:"exported_at"`
	// Redacted says how many patterns and matches were replaced in the
	// files and content before they were packed (never the patterns).
	Redacted []string `json:"redacted,omitempty"`
}

// Options of Make.
type Options struct {
	// Store holds the stubs' content; nil (or no store) leaves it out,
	// every stub's key listed as missing.
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
// o.Stage/out/<folder>/<id>.tar.zst with its sidecar manifest: an archive
// of sessions/archive's format (the session's files as they are, or
// redacted; the stored content of its stubs; the note as a declared
// part), packed as a copy, read back and verified. The session is not
// touched. src.Project must be the project root.
func Make(ctx context.Context, src archive.Source, o Options) (*archive.Packed, error) {
	note := &Note{Format: NoteFormat, CCM: o.Version, Machine: o.Machine, Exported: o.Now.UTC()}
	st := o.Store
	var red *redaction
	if o.Redact != nil || o.Snapshot {
		if o.Redact != nil {
			var err error
			if red, err = newRedaction(o.Redact, o.Store, filepath.Join(o.Stage, "store")); err != nil {
				return nil, err
			}
			st = red.to
		}
		var err error
		if src, err = snapshot(ctx, src, filepath.Join(o.Stage, "cfg"), red); err != nil {
			return nil, err
		}
		if red != nil {
			if err := red.commit(); err != nil {
				return nil, err
			}
			note.Redacted = o.Redact.Note()
		}
	}
	data, err := json.MarshalIndent(note, "", "  ")
	if err != nil {
		return nil, err
	}
	p, err := archive.Pack(ctx, src, archive.Options{Root: filepath.Join(o.Stage, "out"), Level: o.Level, Now: o.Now, Store: st,
		KeepOriginals: true, Redacted: red != nil, Parts: []archive.PartData{{Kind: PartKind, Name: PartName, Format: NoteFormat, Data: append(data, '\n')}}})
	if err != nil {
		return nil, err
	}
	if red != nil {
		if err := red.check(p.Manifest.Refs); err != nil {
			p.Discard()
			return nil, err
		}
	}
	return p, nil
}

// snapshot copies the session's files into cfg, with the same names
// relative to it, modes and mtimes, transcripts up to their last whole
// line; with a redaction every file is redacted and every store key the
// transcripts name becomes its redacted content's. It returns the source
// of the copy.
func snapshot(ctx context.Context, src archive.Source, cfg string, red *redaction) (archive.Source, error) {
	files, dirs := src.Files()
	var keys *strings.Replacer
	if red != nil {
		var err error
		if keys, err = red.transcripts(ctx, files); err != nil {
			return src, err
		}
	}
	mapped := map[string]sessions.File{}
	for _, f := range files {
		rel, err := filepath.Rel(src.ConfigDir, f.Path)
		if err != nil {
			return src, err
		}
		dest := filepath.Join(cfg, rel)
		if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
			return src, err
		}
		jsonl := strings.Contains(filepath.Base(f.Path), ".jsonl")
		var r *Redactor
		if red != nil {
			r = red.red
		}
		if err := copySnapshot(f, dest, jsonl, r, keys); err != nil {
			return src, err
		}
		fi, err := os.Lstat(dest)
		if err != nil {
			return src, err
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
	return out, nil
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

// replaceLines applies rep to every line of r that may name a key.
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
