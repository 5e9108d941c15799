package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"ccm/internal/fsutil"
	"ccm/sessions"
)

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
		paths = append(paths, p.Archive, SidecarPath(p.Archive), markerPath(p.Archive))
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
	writers, procOK := fsutil.LiveOpenForWriting(writerRoots(packed))
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
		step("archive-synced")
		if err := removeOriginals(p.files, p.dirs, changed); err != nil {
			errs[i] = fmt.Errorf("archived to %s, but removing the originals failed: %w", p.Archive, err)
		}
	}
	step("archive-removed")
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
	// The originals' removal is durable: the markers go (a failed removal
	// keeps its marker, and the next run finishes it). A marker that a
	// power cut brings back costs that run a verify, nothing else.
	for i, p := range packed {
		if p.Archive != "" && errs[i] == nil {
			os.Remove(markerPath(p.Archive))
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

// removeOriginals removes the archived files, then the folders that are
// empty (deepest first), and notes in changed the folders to fsync.
func removeOriginals(files []sessions.File, dirs []string, changed map[string]bool) error {
	var first error
	for i, f := range files {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
		changed[filepath.Dir(f.Path)] = true
		if i == 0 {
			step("archive-removing")
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err == nil {
			changed[filepath.Dir(dirs[i])] = true
		}
	}
	return first
}
