package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is returned by OpenRegular for a FIFO, device, socket or
// directory.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens a file for reading only if it is a regular file; for
// any other file it returns an error wrapping ErrNotRegular that says
// what the file is, without the path (callers name it).
// Opening a FIFO blocks until a writer appears, where no signal can end
// the wait; the file is therefore opened non-blocking and checked before
// anything reads it (non-blocking means nothing for a regular file).
// Symlinks are followed, as os.Open follows them. On Windows the file is
// shared for deletion (see OpenFile): a rewrite can rename its new file
// over the one it reads.
func OpenRegular(path string) (*os.File, error) {
	// A socket cannot be opened at all (ENXIO); stat first to say what
	// the file is.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular(fi.Mode())
	}
	f, err := OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(fi.Mode())
	}
	return f, nil
}

// notRegular names what a file is instead of a regular file.
func notRegular(m fs.FileMode) error {
	what := ""
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		return ErrNotRegular
	}
	return fmt.Errorf("%w: it is %s", ErrNotRegular, what)
}
