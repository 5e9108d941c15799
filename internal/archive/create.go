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

// Create writes the session into a new archive, fsyncs it, reads it back
// and compares every file's SHA-256 with what was read from the
// originals, checks that no original changed meanwhile, and only then
// removes the originals. On any failure before that point the originals
// are untouched and no archive (not even a partial one) is left.
func Create(ctx context.Context, src Source, o Options) (res *Result, err error) {
	files, dirs := src.Files()
	ss := src.Session
	m := &Manifest{Format: Format, Session: ss.ID, Folder: ss.Folder, Project: src.Project, Title: src.Title,
		Prompt: src.Prompt, Records: src.Records, Context: src.Context, Created: o.Now.UTC(),
		LastModified: ss.Main.ModTime, Refs: []string{}}
	if err := writableParents(files); err != nil {
		return nil, err
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
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, sum), 1<<20)
	enc, err := zstd.NewWriter(bw, zstd.WithEncoderLevel(o.Level), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
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
	buf := make([]byte, 1<<20)
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
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	fi, err := tmp.Stat()
	if err != nil {
		return nil, err
	}
	m.ArchiveBytes = fi.Size()
	m.ArchiveSHA256 = hex.EncodeToString(sum.Sum(nil))
	// Read it back from the disk and compare every hash.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := verifyStream(tmp, m); err != nil {
		return nil, fmt.Errorf("read-back verification failed: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	// No-clobber publish: link fails if an archive appeared meanwhile.
	if err := os.Link(tmpName, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", dest, ErrExists)
		}
		return nil, err
	}
	os.Remove(tmpName)
	keep = true
	published := true
	defer func() {
		if published && err != nil {
			os.Remove(dest)
			os.Remove(SidecarPath(dest))
			fsutil.SyncDir(filepath.Dir(dest))
		}
	}()
	side, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(SidecarPath(dest), fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(append(side, '\n')); return err }); err != nil {
		return nil, err
	}
	if err := fsutil.SyncDir(filepath.Dir(dest)); err != nil {
		return nil, err
	}
	// Live writes win: any change to an original since it was read
	// leaves the session in place.
	for _, f := range files {
		if err := unchanged(f); err != nil {
			return nil, err
		}
	}
	if o.Check != nil {
		if err := o.Check(); err != nil {
			return nil, err
		}
	}
	published = false // from here on the archive is the copy; keep it
	if err := removeOriginals(files, dirs); err != nil {
		return &Result{Archive: dest, Files: len(files), Bytes: m.Bytes, ArchiveBytes: m.ArchiveBytes, Manifest: m},
			fmt.Errorf("archived to %s, but removing the originals failed: %w", dest, err)
	}
	return &Result{Archive: dest, Files: len(files), Bytes: m.Bytes, ArchiveBytes: m.ArchiveBytes, Manifest: m}, nil
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

func relTo(base, path string) (string, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", path, base)
	}
	return filepath.ToSlash(rel), nil
}

// unchanged checks that a file is still the one that was archived.
func unchanged(f sessions.File) error {
	fi, err := os.Lstat(f.Path)
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", f.Path, ErrChanged, err)
	}
	if fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) || fsutil.IDOf(fi) != f.ID {
		return fmt.Errorf("%s: %w", f.Path, ErrChanged)
	}
	if strings.HasSuffix(f.Path, ".jsonl") {
		if pids, _ := fsutil.Writers(f.Path, fi); len(pids) > 0 {
			return fmt.Errorf("%s: %w (open for writing by process %d)", f.Path, ErrChanged, pids[0])
		}
	}
	return nil
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
// empty (deepest first), and fsyncs the folders that changed.
func removeOriginals(files []sessions.File, dirs []string) error {
	changed := map[string]bool{}
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
	for d := range changed {
		if _, err := os.Stat(d); err == nil {
			fsutil.SyncDir(d)
		}
	}
	return first
}
