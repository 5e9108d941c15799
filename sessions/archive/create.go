package archive

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/tar"
	"ccm/sessions"
)

// Source is one session to archive: its files as a scan found them.
type Source struct {
	ConfigDir string
	Session   *sessions.Session
	Related   []sessions.File // file-history, todos, debug log
	RelDirs   []string        // file-history's folders
	Project   string
	Title     string
	Prompt    string
	Records   int64
	Context   int64
}

// Files lists every file of the source and every folder, parents first.
func (s Source) Files() ([]sessions.File, []string) {
	ss := s.Session
	files := []sessions.File{ss.Main}
	files = append(files, ss.Companion...)
	files = append(files, ss.Legacy...)
	files = append(files, ss.Backups...)
	files = append(files, s.Related...)
	dirs := append(append([]string(nil), ss.CompanionDirs...), s.RelDirs...)
	sort.Strings(dirs) // parents sort before their children
	return files, dirs
}

// Options of Create.
type Options struct {
	Root  string // archive root; archives go to Root/<folder>/<id>.tar.zst
	Level zstd.EncoderLevel
	Now   time.Time
	// Store holds the content of the session's stubs, which the archive
	// carries; nil (no store yet) archives the files alone.
	Store *ccm.Store
	// Check, if set, runs after the archive is verified and before any
	// original is removed; an error keeps the originals and removes the
	// archive (a live write, a lock lost).
	Check func() error
	// Parts are members of other kinds the archive carries after the
	// content, declared in the manifest (an exported bundle's own record).
	Parts []PartData
	// KeepOriginals packs a copy: the session stays where it is (an
	// export), so its folders need not be writable. Finish is not for it.
	KeepOriginals bool
	// Redacted says the files were redacted on their way in (ccm export
	// --redact): the manifest says so (Manifest.Redacted).
	Redacted bool
}

// PartData is a part to write: parts/<Kind>/<Name>, its bytes, and the
// format of its bytes when its kind has one (declared in the manifest).
type PartData struct {
	Kind, Name string
	Format     string
	Data       []byte
}

// Result of Create.
type Result struct {
	Archive      string    `json:"archive"`
	Files        int       `json:"files"`
	Bytes        int64     `json:"bytes"`
	ArchiveBytes int64     `json:"archive_bytes"`
	Manifest     *Manifest `json:"-"`
}

// ErrChanged means a file of the session changed while it was archived:
// Claude Code's live writes win, the session stays where it is.
var ErrChanged = errors.New("written to during archiving; left in place")

// ErrExists means an archive of the session is already there.
var ErrExists = errors.New("already exists")

// Packed is a session whose archive is written, read back and verified,
// and published under its final name with its sidecar, but not yet
// fsynced: its originals are all still in place. Finish makes a batch of
// them durable and then removes their originals; Discard undoes one.
type Packed struct {
	Result
	src   Source
	files []sessions.File
	dirs  []string
}

// Create archives one session: Pack, then Finish. On any failure before
// the originals are removed, the originals are untouched and no archive
// (not even a partial one) is left.
func Create(ctx context.Context, src Source, o Options) (*Result, error) {
	p, err := Pack(ctx, src, o)
	if err != nil {
		return nil, err
	}
	var check func(*Packed) error
	if o.Check != nil {
		check = func(*Packed) error { return o.Check() }
	}
	if err := Finish([]*Packed{p}, check)[0]; err != nil {
		if p.Archive == "" {
			return nil, err
		}
		return &p.Result, err
	}
	return &p.Result, nil
}

// Pack writes the session into a new archive (a temp file beside it),
// hashing every original as it is read, reads the archive back once and
// compares every file's SHA-256 and size, then publishes it under its
// final name (never over another archive) with its sidecar manifest.
// Nothing is fsynced and no original is touched: Finish does both, for a
// whole batch at once. On error nothing is left behind.
func Pack(ctx context.Context, src Source, o Options) (p *Packed, err error) {
	files, dirs := src.Files()
	ss := src.Session
	sc, err := newScope(ss.Folder, ss.ID)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Format: Format, Redacted: o.Redacted, Session: ss.ID, Folder: ss.Folder, Project: src.Project, Title: src.Title,
		Prompt: src.Prompt, Records: src.Records, Context: src.Context, Created: o.Now.UTC(),
		LastModified: ss.Main.ModTime, Refs: []string{}}
	if !o.KeepOriginals {
		if err := writableParents(files); err != nil {
			return nil, err
		}
	}
	dest := ArchivePath(o.Root, ss.Folder, ss.ID)
	if err := clearWay(dest, src.ConfigDir, files); err != nil {
		return nil, err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
		return nil, err
	}
	// The marker first: whatever stops this run, the next one finds it. A
	// copy needs none: no original is ever at stake.
	if !o.KeepOriginals {
		if err := writeMarker(dest, &pending{Op: opArchive, ConfigDir: src.ConfigDir, Started: o.Now}, false); err != nil {
			return nil, err
		}
	}
	published := false
	defer func() {
		if !published {
			os.Remove(markerPath(dest))
		}
	}()
	tmp, err := fsutil.CreateTemp(dest)
	if err != nil {
		return nil, err
	}
	tmpName := tmp.Name()
	defer func() {
		tmp.Close()
		os.Remove(tmpName) // published by a hard link, or failed
	}()
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, sum), 1<<20)
	enc := getEncoder(o.Level, bw)
	defer putEncoder(o.Level, enc)
	tw := tar.NewWriter(enc)
	for _, d := range dirs {
		rel, err := relTo(src.ConfigDir, d)
		if err != nil {
			return nil, err
		}
		if err := sc.dir(rel); err != nil {
			return nil, err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return nil, err
		}
		e := Entry{Path: rel, Mode: fi.Mode().Perm(), MTime: fi.ModTime()}
		m.Dirs = append(m.Dirs, e)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: int64(e.Mode), ModTime: e.MTime, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	keys := &keyFinder{}
	buf := getBuffer()
	defer putBuffer(buf)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := addFile(tw, src.ConfigDir, sc, f, keys, buf)
		if err != nil {
			return nil, err
		}
		m.Files = append(m.Files, e)
		m.Bytes += e.Size
	}
	if err := writeContent(ctx, tw, o.Store, keys, m, m.Created, buf); err != nil {
		return nil, err
	}
	for _, pd := range o.Parts {
		if err := writePart(tw, pd, m); err != nil {
			return nil, err
		}
	}
	inner, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: 0o600, Size: int64(len(inner)), ModTime: m.Created, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(inner); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	m.ArchiveBytes = size
	m.ArchiveSHA256 = hex.EncodeToString(sum.Sum(nil))
	// Read it back once and compare every member's hash and size with
	// what was read from the originals and the store.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := walkArchive(bufio.NewReaderSize(tmp, 1<<20), walk{scope: sc, want: m}); err != nil {
		return nil, fmt.Errorf("read-back verification failed: %w", err)
	}
	step("archive-packed")
	// No-clobber publish: link fails if an archive appeared meanwhile.
	if err := os.Link(tmpName, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", dest, ErrExists)
		}
		return nil, err
	}
	published = true
	step("archive-linked")
	p = &Packed{Result: Result{Archive: dest, Files: len(files), Bytes: m.Bytes, ArchiveBytes: m.ArchiveBytes, Manifest: m},
		src: src, files: files, dirs: dirs}
	side, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = fsutil.WriteFileUnsynced(SidecarPath(dest), fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(append(side, '\n')); return err })
	}
	if err != nil {
		p.Discard()
		return nil, err
	}
	step("archive-published")
	return p, nil
}

// clearWay makes sure no archive is in dest's place. One that an
// interrupted run left (its marker says so) is finished or undone; one
// without a marker that verifies and holds exactly the session's files
// as they are now is a copy of what this run would write (a run cut short
// by a power cut, or by a ccm without markers) and goes. Any other is
// ErrExists.
func clearWay(dest, configDir string, files []sessions.File) error {
	if _, err := os.Lstat(dest); err != nil {
		if pm, err := readMarker(dest); err == nil && pm != nil && pm.Op == opArchive && sameDir(pm.ConfigDir, configDir) {
			_, err := recoverArchive(dest, configDir)
			return err
		}
		return nil
	}
	pm, err := readMarker(dest)
	if err != nil {
		return err
	}
	if pm != nil && pm.Op == opArchive && sameDir(pm.ConfigDir, configDir) {
		if _, err := recoverArchive(dest, configDir); err != nil {
			return err
		}
		if _, err := os.Lstat(dest); err != nil {
			return nil
		}
		return fmt.Errorf("%s: %w (an interrupted archive of it was finished)", dest, ErrExists)
	}
	if pm == nil && stale(dest, configDir, files) {
		return discard(dest)
	}
	return fmt.Errorf("%s: %w (unarchive it first, or remove it)", dest, ErrExists)
}

// stale reports whether the archive at dest verifies and holds exactly
// files, each as it is now.
func stale(dest, configDir string, files []sessions.File) bool {
	m, err := Verify(dest)
	if err != nil || len(m.Files) != len(files) {
		return false
	}
	for _, e := range m.Files {
		if !sameFile(filepath.Join(configDir, filepath.FromSlash(e.Path)), e) {
			return false
		}
	}
	return true
}

// Discard removes a packed session's archive, sidecar and marker; its
// originals were never touched.
func (p *Packed) Discard() {
	os.Remove(p.Archive)
	os.Remove(SidecarPath(p.Archive))
	os.Remove(markerPath(p.Archive))
}
