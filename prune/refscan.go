package prune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"ccm/ccm"
	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/transcript/rewrite"
)

// IndexStats describes a refresh of the reference index.
type IndexStats struct {
	Roots     []string `json:"roots"`
	Files     int      `json:"files"`           // files that reference the store, looked at
	Unchanged int      `json:"files_unchanged"` // known and not changed: not read
	Grown     int      `json:"files_grown"`     // appended to: only the new bytes read
	Read      int      `json:"files_read"`      // read whole
	BytesRead int64    `json:"bytes_read"`
	Keys      int      `json:"referenced_keys"`
	// Rebuilt says why the index was made anew ("" when it was read).
	Rebuilt string `json:"rebuilt,omitempty"`
	// Unreachable are recorded folders that are not there now (a disk not
	// mounted): the references found there before are kept.
	Unreachable []string      `json:"unreachable_roots,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
}

// refJob is a file to read for the index.
type refJob struct {
	path, root string
	old        *refEntry // what the index knew, nil if nothing
	grow       bool      // read from old.Size on
}

// Refresh brings the index up to date with every file that may reference
// the store under roots (the config dir's transcript folders, the archive
// folder) and the recorded roots, reading only files that changed, and
// returns the keys they reference. A folder that cannot be read fails the
// refresh: it could hide references.
func (x *RefIndex) Refresh(ctx context.Context, roots []string, progress ui.Progress) (Refs, *IndexStats, error) {
	start := time.Now()
	st := &IndexStats{Rebuilt: x.rebuilt}
	all := make([]string, 0, len(roots)+len(x.roots))
	for _, r := range append(slices.Clone(roots), x.Roots()...) {
		if abs, err := filepath.Abs(r); err == nil && !slices.Contains(all, abs) {
			all = append(all, abs)
		}
	}
	var deadFiles []string // file roots whose file is gone
	st.Roots = all
	seen := map[string]bool{}
	present := map[string]bool{} // roots that exist now
	var jobs []refJob
	var total int64
	for _, root := range all {
		real, err := filepath.EvalSymlinks(root)
		if errors.Is(err, fs.ErrNotExist) {
			switch i := findRoot(x.roots, root); {
			case i >= 0 && !x.roots[i].dir:
				deadFiles = append(deadFiles, root)
			case i >= 0 && x.hasEntriesUnder(root):
				st.Unreachable = append(st.Unreachable, root)
			}
			continue
		}
		if err != nil {
			return nil, st, err
		}
		present[root] = true
		err = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err // an unreadable folder could hide references
			}
			if d.IsDir() || !IsTranscriptName(d.Name()) || seen[path] {
				return nil
			}
			fi, err := os.Stat(path) // follows a symlinked transcript
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while the walk ran
			}
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				return nil
			}
			seen[path] = true
			st.Files++
			if j, ok := x.plan(path, root, fi); ok {
				jobs = append(jobs, j)
				if j.grow {
					total += fi.Size() - j.old.Size
				} else {
					total += fi.Size()
				}
			} else {
				st.Unchanged++
			}
			return nil
		})
		if err != nil {
			return nil, st, fmt.Errorf("read references: %w", err)
		}
	}
	// What the walk did not find: gone, unless its root is not there at
	// all (then kept), or it was recorded on its own.
	for path, e := range x.entries {
		if seen[path] {
			continue
		}
		switch {
		case present[e.Root], slices.Contains(deadFiles, e.Root):
			delete(x.entries, path)
			x.dirty = true
		case slices.Contains(all, e.Root):
			// A folder that is not reachable now: keep what it
			// referenced.
		default:
			delete(x.entries, path)
			x.dirty = true
		}
	}
	for _, r := range deadFiles {
		if err := x.dropRoot(r); err != nil {
			return nil, st, err
		}
	}
	if progress != nil && len(jobs) > 0 {
		progress.Start("reading references", total, true)
	}
	err := x.read(ctx, jobs, st, progress)
	if progress != nil && len(jobs) > 0 {
		progress.Finish()
	}
	if err != nil {
		return nil, st, err
	}
	refs := x.Refs()
	st.Keys = len(refs)
	st.Duration = time.Since(start)
	return refs, st, nil
}

// hasEntriesUnder reports whether the index holds files found under root.
func (x *RefIndex) hasEntriesUnder(root string) bool {
	for _, e := range x.entries {
		if e.Root == root {
			return true
		}
	}
	return false
}

// Refs is every key the index holds.
func (x *RefIndex) Refs() Refs {
	refs := Refs{}
	for _, e := range x.entries {
		for _, k := range e.keys {
			refs[k] = struct{}{}
		}
	}
	return refs
}

// plan decides what to read of a file the walk found: nothing when the
// index knows it unchanged, the new bytes when it only grew, else all.
func (x *RefIndex) plan(path, root string, fi os.FileInfo) (refJob, bool) {
	e := x.entries[path]
	if e == nil {
		return refJob{path: path, root: root}, true
	}
	id := fsutil.IDOf(fi)
	same := id.Dev == e.Dev && id.Ino == e.Ino
	if same && fi.Size() == e.Size && fi.ModTime().UnixNano() == e.MTime {
		if e.Root != root {
			e.Root = root
			x.dirty = true
		}
		return refJob{}, false
	}
	grow := same && fi.Size() > e.Size && e.Tail != "" && !compressedBackup(path)
	return refJob{path: path, root: root, old: e, grow: grow}, true
}

// Note brings the index up to date with the given files now, as a
// command that just wrote, renamed or removed them knows they changed:
// a file that exists is read (only its new bytes when it grew), one that
// is gone is forgotten. root is what the files were found under (a
// folder walked on every refresh, or a recorded root).
func (x *RefIndex) Note(ctx context.Context, root string, paths ...string) error {
	root, _ = filepath.Abs(root)
	var jobs []refJob
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		fi, err := os.Stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			if _, ok := x.entries[abs]; ok {
				delete(x.entries, abs)
				x.dirty = true
			}
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() || !IsTranscriptName(filepath.Base(abs)) {
			continue
		}
		if j, ok := x.plan(abs, root, fi); ok {
			jobs = append(jobs, j)
		}
	}
	return x.read(ctx, jobs, &IndexStats{}, nil)
}

// read reads the jobs on a few workers and records what they found.
func (x *RefIndex) read(ctx context.Context, jobs []refJob, st *IndexStats, progress ui.Progress) error {
	if len(jobs) == 0 {
		return nil
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	var add func(int64)
	if progress != nil {
		add = func(n int64) {
			mu.Lock()
			progress.Add(n)
			mu.Unlock()
		}
	}
	newBuf := func() []byte { return make([]byte, 1<<20) }
	batch.RunWith(ctx, len(jobs), 0, newBuf, func(buf []byte, i int) {
		j := jobs[i]
		e, n, err := readRefs(ctx, j, buf, add)
		mu.Lock()
		defer mu.Unlock()
		st.BytesRead += n
		switch {
		case errors.Is(err, fs.ErrNotExist):
			delete(x.entries, j.path) // removed meanwhile
		case err != nil:
			errs = append(errs, fmt.Errorf("read references in %s: %w", j.path, err))
		default:
			x.entries[j.path] = e
			if j.grow && e.Tail != "" {
				st.Grown++
			} else {
				st.Read++
			}
		}
		x.dirty = true
	}, nil)
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// readRefs reads one file's keys: from where it was last read when it
// only grew (its old last bytes unchanged), else whole; a zstd backup is
// read as it decompresses. It reads up to the size it found at open, so
// bytes appended meanwhile are read by the next refresh.
func readRefs(ctx context.Context, j refJob, buf []byte, add func(int64)) (*refEntry, int64, error) {
	f, err := fsutil.OpenRegular(j.path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	id := fsutil.IDOf(fi)
	e := &refEntry{Root: j.root, Dev: id.Dev, Ino: id.Ino, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	refs := Refs{}
	from := int64(0)
	if j.grow && j.old.Dev == id.Dev && j.old.Ino == id.Ino && fi.Size() > j.old.Size {
		if sum, err := fsutil.TailSum(f, j.old.Size); err == nil && sum == j.old.Tail {
			// Only appended to: the keys before stay, a key split across
			// the old end is read whole again.
			from = max(0, j.old.Size-int64(keyTail))
			for _, k := range j.old.keys {
				refs[k] = struct{}{}
			}
		}
	}
	var n int64
	if compressedBackup(j.path) {
		// Progress counts the bytes on disk, as the total does.
		if _, err = scanCompressed(ctx, j.path, refs, nil); err == nil {
			n = e.Size
			if add != nil {
				add(n)
			}
		}
	} else {
		n, err = scanReader(ctx, io.NewSectionReader(f, from, e.Size-from), buf, refs, add)
		if err == nil {
			e.Tail, err = fsutil.TailSum(f, e.Size)
		}
	}
	if err != nil {
		return nil, n, err
	}
	e.keys = make([]ccm.Key, 0, len(refs))
	for k := range refs {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	return e, n, nil
}

// compressedBackup reports whether a file is a zstd purge backup, whose
// keys are found only once it is decompressed.
func compressedBackup(path string) bool {
	name := filepath.Base(path)
	return strings.Contains(name, ".jsonl.backup.") && strings.HasSuffix(name, rewrite.ZstdExt)
}

// scanCompressed adds the keys in a zstd backup to refs; it returns the
// compressed bytes read.
func scanCompressed(ctx context.Context, path string, refs Refs, add func(int64)) (int64, error) {
	r, err := rewrite.OpenBackup(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	kc := &KeyCollector{Refs: refs}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := r.Read(buf)
		kc.Write(buf[:m])
		n += int64(m)
		if add != nil && m > 0 {
			add(int64(m))
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
