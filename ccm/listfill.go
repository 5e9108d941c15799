// Filling a listing: this file reads what each listed blob's files say
// (its metadata, or the pack index's entry, and the files' sizes) on a
// few workers, for List.

package ccm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
)

// fillEntries stats blob files and reads metadata for every entry, with a
// few workers: the work is system calls, which overlap well.
func (s *Store) fillEntries(ctx context.Context, entries []Entry, progress func(done, total int)) error {
	workers := min(2*runtime.GOMAXPROCS(0), 8)
	// Metadata is opened relative to its folder: a shorter path walk per
	// file, which at 100,000 files is measurable.
	dir := fsutil.OpenDir(s.path(metaDir))
	defer dir.Close()
	// The first error stops the listing: a store that cannot be read
	// whole is not listed.
	run, stop := context.WithCancel(ctx)
	defer stop()
	var done atomic.Int64
	var mu sync.Mutex
	var errs []error
	newBuf := func() *[]byte { b := make([]byte, 8192); return &b }
	batch.RunWith(run, len(entries), workers, newBuf, func(buf *[]byte, i int) {
		if err := fillEntry(&entries[i], buf, dir); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			stop()
			return
		}
		if d := done.Add(1); progress != nil && d%2048 == 0 {
			progress(int(d), len(entries))
		}
	}, nil)
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if progress != nil {
		progress(len(entries), len(entries))
	}
	return nil
}

// fillEntry decodes one entry's metadata and sizes its files.
func fillEntry(e *Entry, buf *[]byte, dir *fsutil.Dir) error {
	if len(e.Files) > 0 && e.Files[0].Packed {
		// Its metadata is the index's, its size the frame's; other copies
		// (files from before packs) are only sized.
		if len(e.Files) > 1 {
			rest := Entry{Files: e.Files[1:]}
			if err := statFiles(&rest); err != nil {
				return err
			}
			e.Files = append(e.Files[:1], rest.Files...)
		}
		return nil
	}
	if e.MetaPath != "" {
		b, err := readSmall(e.MetaPath, buf, dir)
		switch {
		case err == nil && len(b) == 0:
			// An empty file is a crash artifact: no metadata (see readMeta).
			e.MetaPath = ""
		case err == nil:
			e.Meta, e.MetaErr = parseMeta(b, e.Key)
		case errors.Is(err, fs.ErrNotExist):
			e.MetaPath = "" // removed since the directory was read
		default:
			e.MetaErr = err
		}
	}
	// A blob's size is in its metadata when ccm wrote it; blobs never change
	// after the rename that creates them, so the stat is skipped then. At
	// 100,000 blobs that is a tenth of a second of system calls.
	if m := e.Meta; m != nil && len(e.Files) == 1 && m.BytesCompressed > 0 && Compression(m.Compression) == e.Files[0].Compression {
		e.Files[0].Size = m.BytesCompressed
	} else if err := statFiles(e); err != nil {
		return err
	}
	if e.MetaPath == "" && e.MetaErr == nil {
		e.MetaMissing = true
		e.Meta = nil
		if len(e.Files) > 0 {
			e.Meta, e.MetaErr = metaFromFile(e.Key, e.Files[0])
		}
	}
	return nil
}

// statFiles sizes an entry's files, dropping any that vanished or are not
// regular files.
func statFiles(e *Entry) error {
	files := e.Files[:0]
	for _, f := range e.Files {
		st, err := fsutil.Lstat(f.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since the directory was read
			}
			return err
		}
		if !st.Mode.IsRegular() {
			continue // not a file the store wrote; never followed
		}
		f.Size = st.Size
		files = append(files, f)
	}
	e.Files = files
	return nil
}

// readSmall reads a small regular file (a metadata file) into *buf, in
// dir where it can, refusing symlinks and files over maxMetaSize.
func readSmall(path string, buf *[]byte, dir *fsutil.Dir) ([]byte, error) {
	b, err := fsutil.ReadSmall(dir, path, buf, maxMetaSize)
	switch {
	case errors.Is(err, fsutil.ErrSymlink):
		return nil, fmt.Errorf("%s is a symlink, not a store file", path)
	case errors.Is(err, fsutil.ErrNotRegular):
		return nil, fmt.Errorf("%s is not a regular file", path)
	case errors.Is(err, fsutil.ErrTooLarge):
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrBadMeta, maxMetaSize)
	}
	return b, err
}
