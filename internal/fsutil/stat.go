package fsutil

import (
	"errors"
	"io/fs"
)

// Stat is what ccm needs to know of a file, read without allocating an
// os.FileInfo: its identity (device and inode, or volume and file index
// on Windows), size and type.
type Stat struct {
	ID   FileID
	Size int64
	Mode fs.FileMode // type bits, and the permission bits where the system has them
}

// ErrSymlink is returned by ReadSmall and OpenPrivate for a symlink,
// which they never follow: ccm never opens its own files through one.
var ErrSymlink = errors.New("is a symlink")

// ErrTooLarge is returned by ReadSmall for a file larger than its limit.
var ErrTooLarge = errors.New("too large")
