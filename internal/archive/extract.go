package archive

import (
	"archive/tar"
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

	"ccm/fsutil"
)

// maxManifest bounds the manifest member read into memory.
const maxManifest = 256 << 20

// verifyStream reads a whole archive: every file member's SHA-256 and size
// must match want (or, when want is nil, the archive's own manifest), and
// its manifest must list exactly the members found. It returns the
// archive's manifest.
func verifyStream(r io.Reader, want *Manifest) (*Manifest, error) {
	return walkArchive(r, want, nil)
}

// Walk reads an archive, checking it as Verify does (against want, or
// its own manifest when want is nil), and hands fn every file member, its
// extra members too, as it is read; fn's error stops the walk. A member
// that fails its check is reported after fn has read it: the caller
// discards what it made of a walk that returns an error.
func Walk(r io.Reader, want *Manifest, fn func(e Entry, r io.Reader) error) (*Manifest, error) {
	return walkArchive(r, want, fn)
}

// walkArchive reads an archive, checking it as verifyStream does; file,
// if not nil, receives each file member's entry and content as it is read
// (its error stops the walk).
func walkArchive(r io.Reader, want *Manifest, file func(e Entry, r io.Reader) error) (*Manifest, error) {
	dec := decoders.Get().(*zstd.Decoder)
	if err := dec.Reset(r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer func() { dec.Reset(nil); decoders.Put(dec) }()
	tr := tar.NewReader(dec)
	got := map[string]string{}
	sizes := map[string]int64{}
	var inner *Manifest
	wanted := map[string]Entry{}
	if want != nil {
		for _, e := range want.Files {
			wanted[e.Path] = e
		}
	}
	buf := getBuffer()
	defer putBuffer(buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := safeRel(trimSlash(h.Name)); err != nil {
				return nil, err
			}
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: unexpected member type %q for %s", ErrCorrupt, h.Typeflag, h.Name)
		}
		if h.Name == ManifestName {
			data, err := io.ReadAll(io.LimitReader(tr, maxManifest))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			inner = &Manifest{}
			if err := json.Unmarshal(data, inner); err != nil || inner.Format != Format {
				return nil, fmt.Errorf("%w: bad manifest", ErrCorrupt)
			}
			continue
		}
		if err := safeRel(h.Name); err != nil {
			return nil, err
		}
		if _, dup := got[h.Name]; dup {
			return nil, fmt.Errorf("%w: %s appears twice", ErrCorrupt, h.Name)
		}
		hs := sha256.New()
		var w io.Writer = hs
		var pr *io.PipeReader
		var done chan error
		if file != nil {
			var pw *io.PipeWriter
			pr, pw = io.Pipe()
			w = io.MultiWriter(hs, pw)
			done = make(chan error, 1)
			e := Entry{Path: h.Name, Mode: fs.FileMode(h.Mode).Perm(), MTime: h.ModTime, Size: h.Size}
			go func() {
				err := file(e, pr)
				pr.CloseWithError(err)
				done <- err
			}()
			n, cerr := io.CopyBuffer(w, tr, buf)
			pw.CloseWithError(cerr)
			if ferr := <-done; ferr != nil {
				return nil, ferr
			}
			if cerr != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, h.Name, cerr)
			}
			sizes[h.Name] = n
		} else {
			n, err := io.CopyBuffer(w, tr, buf)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, h.Name, err)
			}
			sizes[h.Name] = n
		}
		got[h.Name] = hex.EncodeToString(hs.Sum(nil))
		if want != nil {
			e, ok := wanted[h.Name]
			if !ok || e.SHA256 != got[h.Name] || e.Size != sizes[h.Name] {
				return nil, fmt.Errorf("%w: %s does not match what was archived", ErrCorrupt, h.Name)
			}
		}
	}
	if inner == nil {
		return nil, fmt.Errorf("%w: no %s (truncated?)", ErrCorrupt, ManifestName)
	}
	ref := want
	if ref == nil {
		ref = inner
	}
	if len(ref.Files) != len(got) || len(inner.Files) != len(got) {
		return nil, fmt.Errorf("%w: %d files listed, %d found", ErrCorrupt, len(ref.Files), len(got))
	}
	for _, list := range [][]Entry{ref.Files, inner.Files} {
		for _, e := range list {
			if got[e.Path] != e.SHA256 || sizes[e.Path] != e.Size {
				return nil, fmt.Errorf("%w: %s does not match its manifest", ErrCorrupt, e.Path)
			}
		}
	}
	return inner, nil
}

// IsExtra reports whether a member is an extra member (see
// Options.Extra), not a file of the config dir.
func IsExtra(path string) bool {
	return strings.HasPrefix(path, ExtraDir+"/")
}

func trimSlash(s string) string {
	return strings.TrimRight(s, "/")
}

// Verify reads a whole archive and checks it: every member against the
// manifest inside, the archive's size and SHA-256 against its sidecar
// (when there is one), and the sidecar's file list against the inside.
func Verify(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	side, serr := ReadSidecar(SidecarPath(path))
	if serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return nil, serr
	}
	sum := sha256.New()
	cr := &countReader{r: io.TeeReader(f, sum)}
	m, err := verifyStream(cr, side)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Read what the decoder left (trailing garbage counts too).
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return nil, err
	}
	if side != nil && (side.ArchiveBytes != cr.n || side.ArchiveSHA256 != hex.EncodeToString(sum.Sum(nil))) {
		return nil, fmt.Errorf("%s: %w: its size or SHA-256 differs from its manifest", path, ErrCorrupt)
	}
	if side != nil {
		m.ArchiveBytes, m.ArchiveSHA256 = side.ArchiveBytes, side.ArchiveSHA256
	}
	return m, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ExtractOptions of Extract.
type ExtractOptions struct {
	// Force replaces files that exist where the archive's would go; each
	// is first renamed to <file>.backup.<stamp>, never overwritten.
	Force bool
	// Touch gives the restored files the current time instead of their
	// archived mtimes, so Claude Code's sweep does not delete them at once.
	Touch bool
	Now   time.Time
}

// ErrTargetExists means a file of the archive already exists in the
// config dir.
var ErrTargetExists = errors.New("already exists (pass --force to keep it as a backup and restore the archived one)")

// Extract verifies an archive completely, then restores its files under
// configDir byte for byte with their modes and mtimes: each is written to
// a temp file beside its place and hashed again, and only when all are
// on disk are they renamed into place. Then the archive and its sidecar
// are removed. A corrupt archive, or an existing file without Force, is
// refused and nothing changes.
func Extract(ctx context.Context, path, configDir string, o ExtractOptions) (*Manifest, error) {
	m, err := Verify(path)
	if err != nil {
		return nil, err
	}
	var conflicts []string
	for _, e := range m.Files {
		if IsExtra(e.Path) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(configDir, filepath.FromSlash(e.Path))); err == nil {
			conflicts = append(conflicts, e.Path)
		}
	}
	if len(conflicts) > 0 && !o.Force {
		return nil, fmt.Errorf("%s %w", filepath.Join(configDir, filepath.FromSlash(conflicts[0])), ErrTargetExists)
	}
	byPath := map[string]Entry{}
	for _, e := range m.Files {
		byPath[e.Path] = e
	}
	// Folders first, private until their modes are set at the end.
	var created []string
	for _, d := range m.Dirs {
		p := filepath.Join(configDir, filepath.FromSlash(d.Path))
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			created = append(created, p)
		}
		if err := fsutil.MkdirPrivate(p); err != nil {
			return nil, err
		}
	}
	type staged struct{ tmp, dest string }
	var temps []staged
	ok := false
	defer func() {
		if !ok {
			for _, t := range temps {
				os.Remove(t.tmp)
			}
			for i := len(created) - 1; i >= 0; i-- {
				os.Remove(created[i])
			}
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, err = walkArchive(f, m, func(e Entry, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if IsExtra(e.Path) {
			_, err := io.Copy(io.Discard, r) // verified by the walk, not written
			return err
		}
		want := byPath[e.Path]
		dest := filepath.Join(configDir, filepath.FromSlash(e.Path))
		if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
			return err
		}
		t, err := fsutil.CreateTemp(dest)
		if err != nil {
			return err
		}
		temps = append(temps, staged{t.Name(), dest})
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(t, h), r); err != nil {
			t.Close()
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
			t.Close()
			return fmt.Errorf("%s: %w: restored bytes differ", e.Path, ErrCorrupt)
		}
		if err := t.Chmod(want.Mode); err != nil {
			t.Close()
			return err
		}
		if err := t.Sync(); err != nil {
			t.Close()
			return err
		}
		return t.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	stamp := o.Now.Format("20060102_150405.000")
	syncDirs := map[string]bool{}
	for _, t := range temps {
		if o.Force {
			if _, err := os.Lstat(t.dest); err == nil {
				if err := os.Rename(t.dest, t.dest+".backup."+stamp); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, t := range temps {
		if err := os.Rename(t.tmp, t.dest); err != nil {
			return nil, err
		}
		syncDirs[filepath.Dir(t.dest)] = true
	}
	ok = true
	for _, e := range m.Files {
		if IsExtra(e.Path) {
			continue
		}
		mt := e.MTime
		if o.Touch {
			mt = o.Now
		}
		p := filepath.Join(configDir, filepath.FromSlash(e.Path))
		if err := os.Chtimes(p, mt, mt); err != nil {
			return nil, err
		}
	}
	dirs := append([]Entry(nil), m.Dirs...)
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].Path > dirs[j].Path }) // deepest first
	for _, d := range dirs {
		p := filepath.Join(configDir, filepath.FromSlash(d.Path))
		os.Chmod(p, d.Mode)
		os.Chtimes(p, d.MTime, d.MTime)
		syncDirs[filepath.Dir(p)] = true
	}
	for d := range syncDirs {
		if err := fsutil.SyncDir(d); err != nil {
			return nil, err
		}
	}
	// The session is back and durable: the archive goes.
	if err := os.Remove(path); err != nil {
		return m, fmt.Errorf("restored, but removing the archive failed: %w", err)
	}
	os.Remove(SidecarPath(path))
	fsutil.SyncDir(filepath.Dir(path))
	os.Remove(filepath.Dir(path)) // the project's archive folder, when now empty
	return m, nil
}
