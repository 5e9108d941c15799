package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// OpenDir returns a Dir whose files ReadSmall reads by path.
func OpenDir(path string) *Dir {
	return &Dir{path: path, fd: -1}
}

// Close does nothing on Windows. It is safe to call on a nil Dir.
func (d *Dir) Close() error { return nil }

// ReadSmall reads the regular file at path into *buf (grown as needed, up
// to limit bytes). A symlink is never followed (an error wrapping
// ErrSymlink), anything but a regular file is refused (ErrNotRegular), a
// file larger than limit refused (ErrTooLarge).
func ReadSmall(d *Dir, path string, buf *[]byte, limit int) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY|NoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := Fstat(f)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Mode&os.ModeSymlink != 0:
		return nil, fmt.Errorf("%s %w", path, ErrSymlink)
	case !st.Mode.IsRegular():
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	case st.Size > int64(limit):
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrTooLarge, limit)
	}
	if cap(*buf) < int(st.Size)+1 {
		*buf = make([]byte, st.Size+1)
	}
	b := (*buf)[:cap(*buf)]
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrTooLarge, limit)
	}
	return b[:n], nil
}
