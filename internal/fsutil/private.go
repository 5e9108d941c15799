package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// OpenPrivate opens one of ccm's own files in place (a log or index it
// appends to, a lock file, a stamp) with flag, creating it 0600 when
// flag has os.O_CREATE. It never follows a symlink at path: a symlink
// planted there fails with an error wrapping ErrSymlink, so nothing is
// appended to, truncated or chmodded elsewhere. It never blocks either:
// a FIFO, socket, device or directory fails with an error wrapping
// ErrNotRegular, checked on the opened descriptor (no window between a
// check and the open). The folders on the way may be symlinks (a
// ~/.claude kept in a dotfiles repository); only the file itself is
// checked.
//
// Files ccm replaces whole go through WriteFile instead: its rename
// replaces a symlink at path rather than writing through it.
func OpenPrivate(path string, flag int) (*os.File, error) {
	return openPrivate(path, flag)
}

// CreatePrivateAppend opens path for appending with OpenPrivate,
// creating it (0600) and its folder (0700) when missing.
func CreatePrivateAppend(path string) (*os.File, error) {
	const flag = os.O_WRONLY | os.O_APPEND | os.O_CREATE
	f, err := OpenPrivate(path, flag)
	if errors.Is(err, os.ErrNotExist) {
		if err := MkdirPrivate(filepath.Dir(path)); err != nil {
			return nil, err
		}
		f, err = OpenPrivate(path, flag)
	}
	return f, err
}

// SetModTime sets the modification (and access) time of an open file,
// through its descriptor: never through a path that may have changed.
func SetModTime(f *os.File, t time.Time) error {
	return setModTime(f, t)
}
