package fsutil

import (
	"io/fs"
	"os"
	"time"
)

// openPrivate checks the file before opening it: Windows has no
// O_NOFOLLOW, and symlinks there need a privilege to create.
func openPrivate(path string, flag int) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
		case !fi.Mode().IsRegular():
			return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(fi.Mode())}
		}
	}
	return os.OpenFile(path, flag, FileMode)
}

func setModTime(f *os.File, t time.Time) error {
	return os.Chtimes(f.Name(), t, t)
}
