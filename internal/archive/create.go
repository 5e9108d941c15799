package archive

import (
	"archive/tar"
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
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"ccm/fsutil"
	"ccm/internal/sessions"
	"ccm/prune"
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
	// Check, if set, runs after the archive is verified and before any
	// original is removed; an error keeps the originals and removes the
	// archive (a live write, a lock lost).
	Check func() error
	// Extra, if set, is asked, once the session's files are written and
	// the store keys they mention are known, for members to add that are
	// not files of the session (the stored content of its stubs): they
	// are listed in the manifest and verified like the files, never
	// removed, and Extract does not write them.
	Extra func(refs []string) ([]Member, error)
	// KeepOriginals skips the check that the session's folders are
	// writable: the caller copies the session and removes nothing.
	KeepOriginals bool
	// Redacted names what was replaced in the files before they were
	// archived (the manifest says so); the caller did the replacing.
	Redacted []string
}

// ExtraDir is the folder of an archive's extra members (see
// Options.Extra); no file of a config dir is archived under it.
const ExtraDir = "ccm-content"

// Member is an extra member of an archive.
type Member struct {
	Path  string // under ExtraDir, slash-separated
	Size  int64
	MTime time.Time
	Open  func() (io.ReadCloser, error)
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
	m := &Manifest{Format: Format, Session: ss.ID, Folder: ss.Folder, Project: src.Project, Title: src.Title,
		Prompt: src.Prompt, Records: src.Records, Context: src.Context, Created: o.Now.UTC(),
		LastModified: ss.Main.ModTime, Refs: []string{}, Redacted: o.Redacted}
	if !o.KeepOriginals {
		if err := writableParents(files); err != nil {
			return nil, err
		}
	}
	dest := ArchivePath(o.Root, ss.Folder, ss.ID)
	if _, err := os.Lstat(dest); err == nil {
		return nil, fmt.Errorf("%s: %w (unarchive it first, or remove it)", dest, ErrExists)
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
		return nil, err
	}
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
	keys := &prune.KeyCollector{}
	buf := getBuffer()
	defer putBuffer(buf)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := addFile(tw, src.ConfigDir, f, keys, buf)
		if err != nil {
			return nil, err
		}
		m.Files = append(m.Files, e)
		m.Bytes += e.Size
	}
	for k := range keys.Refs {
		m.Refs = append(m.Refs, string(k))
	}
	sort.Strings(m.Refs)
	if o.Extra != nil {
		extra, err := o.Extra(m.Refs)
		if err != nil {
			return nil, err
		}
		for _, x := range extra {
			e, err := addMember(tw, x, buf)
			if err != nil {
				return nil, err
			}
			m.Files = append(m.Files, e)
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
	// Read it back once and compare every file's hash and size with what
	// was read from the originals.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := verifyStream(bufio.NewReaderSize(tmp, 1<<20), m); err != nil {
		return nil, fmt.Errorf("read-back verification failed: %w", err)
	}
	// No-clobber publish: link fails if an archive appeared meanwhile.
	if err := os.Link(tmpName, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", dest, ErrExists)
		}
		return nil, err
	}
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
	return p, nil
}

// Discard removes a packed session's archive and sidecar; its originals
// were never touched.
func (p *Packed) Discard() {
	os.Remove(p.Archive)
	os.Remove(SidecarPath(p.Archive))
}

// Finish completes a batch of packed sessions. It fsyncs every archive and
// sidecar (concurrently: the journal commits are shared) and each archive
// folder once; reads /proc once for the whole batch; then, per session,
// checks that no original changed since it was read (size, mtime, inode)
// and that no other process holds a transcript open for writing, runs
// check (a lock lost), and only then removes the originals. A session that
// fails a check keeps its originals and loses its archive. Each changed
// folder is fsynced once at the end. errs[i] is packed[i]'s outcome; an
// error that wraps ErrChanged means "left in place".
func Finish(packed []*Packed, check func(*Packed) error) (errs []error) {
	errs = make([]error, len(packed))
	var paths []string
	folders := map[string]bool{}
	for _, p := range packed {
		paths = append(paths, p.Archive, SidecarPath(p.Archive))
		folders[filepath.Dir(p.Archive)] = true
	}
	if err := fsutil.SyncFiles(paths, keys(folders)); err != nil {
		for i, p := range packed {
			p.Discard()
			p.Archive = ""
			errs[i] = fmt.Errorf("archive not made durable: %w", err)
		}
		return errs
	}
	writers, procOK := fsutil.OpenForWritingUnder(writerRoots(packed))
	changed := map[string]bool{}
	discarded := false
	for i, p := range packed {
		err := p.stillOriginal(writers, procOK)
		if err == nil && check != nil {
			err = check(p)
		}
		if err != nil {
			p.Discard()
			p.Archive = ""
			discarded = true
			errs[i] = err
			continue
		}
		if err := removeOriginals(p.files, p.dirs, changed); err != nil {
			errs[i] = fmt.Errorf("archived to %s, but removing the originals failed: %w", p.Archive, err)
		}
	}
	if discarded {
		for d := range folders {
			fsutil.SyncDir(d)
		}
	}
	for d := range changed {
		if _, err := os.Stat(d); err == nil {
			fsutil.SyncDir(d)
		}
	}
	return errs
}

// stillOriginal checks that every archived file is still the one that was
// read, and that no transcript is open for writing elsewhere.
func (p *Packed) stillOriginal(writers map[fsutil.FileID][]int, procOK bool) error {
	for _, f := range p.files {
		fi, err := os.Lstat(f.Path)
		if err != nil {
			return fmt.Errorf("%s: %w (%v)", f.Path, ErrChanged, err)
		}
		id := fsutil.IDOf(fi)
		if fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) || id != f.ID {
			return fmt.Errorf("%s: %w", f.Path, ErrChanged)
		}
		if pids := writers[id]; procOK && len(pids) > 0 {
			return fmt.Errorf("%s: %w (open for writing by process %d)", f.Path, ErrChanged, pids[0])
		}
	}
	return nil
}

// writerRoots are the folders whose open files Finish looks for: each
// config dir and each project folder as the kernel names it (a symlinked
// project folder's files show under its target).
func writerRoots(packed []*Packed) []string {
	roots := map[string]bool{}
	for _, p := range packed {
		roots[p.src.ConfigDir] = true
		for _, f := range p.files {
			roots[filepath.Dir(f.Path)] = true
		}
	}
	return keys(roots)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// addFile writes one file into the tar stream, hashing it, and checks
// that it is still the file the scan saw.
func addFile(tw *tar.Writer, configDir string, f sessions.File, keys io.Writer, buf []byte) (Entry, error) {
	rel, err := relTo(configDir, f.Path)
	if err != nil {
		return Entry{}, err
	}
	r, err := fsutil.OpenRegular(f.Path)
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return Entry{}, err
	}
	if fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) {
		return Entry{}, fmt.Errorf("%s: %w", f.Path, ErrChanged)
	}
	e := Entry{Path: rel, Mode: fi.Mode().Perm(), MTime: fi.ModTime(), Size: fi.Size()}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: int64(e.Mode), Size: e.Size, ModTime: e.MTime, Format: tar.FormatPAX}); err != nil {
		return e, err
	}
	h := sha256.New()
	var w io.Writer = io.MultiWriter(tw, h)
	if strings.Contains(filepath.Base(f.Path), ".jsonl") {
		w = io.MultiWriter(tw, h, keys)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(r, e.Size), buf)
	if err != nil {
		return e, err
	}
	if n != e.Size {
		return e, fmt.Errorf("%s: %w (shrank)", f.Path, ErrChanged)
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return e, nil
}

// addMember writes one extra member into the tar stream, hashing it.
func addMember(tw *tar.Writer, x Member, buf []byte) (Entry, error) {
	if !strings.HasPrefix(x.Path, ExtraDir+"/") || safeRel(x.Path) != nil {
		return Entry{}, fmt.Errorf("extra member %q is not under %s/", x.Path, ExtraDir)
	}
	r, err := x.Open()
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	e := Entry{Path: x.Path, Mode: 0o600, MTime: x.MTime, Size: x.Size}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.Path, Mode: int64(e.Mode), Size: e.Size, ModTime: e.MTime, Format: tar.FormatPAX}); err != nil {
		return e, err
	}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(tw, h), io.LimitReader(r, e.Size+1), buf)
	if err != nil {
		return e, fmt.Errorf("%s: %w", x.Path, err)
	}
	if n != e.Size {
		return e, fmt.Errorf("%s: %d bytes, %d announced", x.Path, n, e.Size)
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return e, nil
}

func relTo(base, path string) (string, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", path, base)
	}
	return filepath.ToSlash(rel), nil
}

// writableParents refuses a session whose folders are read-only before
// anything is written: its originals could not be removed.
func writableParents(files []sessions.File) error {
	seen := map[string]bool{}
	for _, f := range files {
		d := filepath.Dir(f.Path)
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := unix.Access(d, unix.W_OK); err != nil {
			return fmt.Errorf("%s: folder is not writable (%v); nothing archived", d, err)
		}
	}
	return nil
}

// removeOriginals removes the archived files, then the folders that are
// empty (deepest first), and notes in changed the folders to fsync.
func removeOriginals(files []sessions.File, dirs []string, changed map[string]bool) error {
	var first error
	for _, f := range files {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
		changed[filepath.Dir(f.Path)] = true
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err == nil {
			changed[filepath.Dir(dirs[i])] = true
		}
	}
	return first
}
