package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// fileError words an error about a file without Go's "stat"/"open" prefix
// noise but with the path and the cause.
func fileError(path string, err error) error {
	// Only an error that is itself about the file is reworded; a wrapped
	// one keeps the context that says what failed (such as the store being
	// full, or its directory missing).
	pe, ok := err.(*fs.PathError)
	if !ok || pe.Path != path {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case errors.Is(pe.Err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file or directory", path)
	case errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	return fmt.Errorf("%s: %w", path, pe.Err)
}

// indexFile opens and indexes one transcript.
func indexFile(path string, opt transcript.BuildOptions) (*transcript.Index, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileError(path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s: %w", path, errEmptyFile)
	}
	ix, err := transcript.Build(f, opt)
	if err != nil {
		return nil, fileError(path, err)
	}
	return ix, nil
}

// errEmptyFile is returned for a 0-byte transcript.
var errEmptyFile = errors.New("empty file (0 bytes), nothing to read")

// absPath returns an absolute path for display and for stored metadata.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
