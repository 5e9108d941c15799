//go:build unix

package fsutil

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Fstat describes an open file.
func Fstat(f *os.File) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Stat{}, &fs.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	return statOf(&st), nil
}

// Lstat describes the file at path, a symlink itself rather than its
// target.
func Lstat(path string) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return statOf(&st), nil
}

func statOf(st *unix.Stat_t) Stat {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return Stat{ID: FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, Size: st.Size, Mode: mode}
}

// KeepOwner gives f the owner and group of the file like describes, where
// this process may (as root for another user's file); an unprivileged
// user owns its files already, so failures are ignored.
func KeepOwner(f *os.File, like os.FileInfo) {
	if st, ok := like.Sys().(*unix.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// CanWrite returns an error when this process may not create files in
// dir (access(2) with W_OK: a read-only filesystem says EROFS, also to
// root).
func CanWrite(dir string) error {
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return &fs.PathError{Op: "access", Path: dir, Err: err}
	}
	return nil
}
