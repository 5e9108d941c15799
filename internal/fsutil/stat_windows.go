package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Fstat describes an open file.
func Fstat(f *os.File) (Stat, error) {
	st, err := handleStat(windows.Handle(f.Fd()))
	if err != nil {
		return Stat{}, &fs.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	return st, nil
}

// Lstat describes the file at path, a symlink (a reparse point) itself
// rather than its target.
func Lstat(path string) (Stat, error) {
	name, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, 0, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	st, err := handleStat(h)
	if err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return st, nil
}

func handleStat(h windows.Handle) (Stat, error) {
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		return Stat{}, err
	}
	mode := fs.FileMode(0o666)
	if d.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		mode = 0o444
	}
	switch {
	case d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		mode |= fs.ModeSymlink
	case d.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		mode |= fs.ModeDir | 0o111
	}
	return Stat{
		ID:   FileID{Dev: uint64(d.VolumeSerialNumber), Ino: uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)},
		Size: int64(d.FileSizeHigh)<<32 | int64(d.FileSizeLow),
		Mode: mode,
	}, nil
}

// KeepOwner does nothing on Windows, where a file's owner is not carried
// over by a rename either way.
func KeepOwner(*os.File, os.FileInfo) {}

// CanWrite returns an error when this process may not create files in
// dir: it creates and removes a temp file there (Windows has no access(2)
// that answers for a read-only volume).
func CanWrite(dir string) error {
	f, err := CreateTemp(filepath.Join(dir, ".ccm-write-probe"))
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
