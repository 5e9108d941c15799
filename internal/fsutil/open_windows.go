//go:build windows

package fsutil

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// NoFollow is an os.OpenFile flag that opens a symlink (a reparse point)
// itself instead of its target; the file it opens is then not a regular
// file, which every caller that passes NoFollow checks.
const NoFollow = windows.FILE_FLAG_OPEN_REPARSE_POINT

// OpenFile is os.OpenFile, except that the file is opened with every share
// mode, delete included: while ccm reads or writes a file, another program
// (or ccm itself) may still rename a new file over it or remove it, as on
// Unix. os.OpenFile leaves out FILE_SHARE_DELETE, so a transcript ccm
// holds open for reading could not be replaced by its own rewrite.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_CREATE != 0 {
		access |= windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// Append-only access makes every write go to the end, as O_APPEND
		// does (this is what os.OpenFile does too).
		if flag&os.O_TRUNC == 0 {
			access &^= windows.GENERIC_WRITE
		}
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	var create uint32
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT // never through a symlink
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	default:
		create = windows.OPEN_EXISTING
	}
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY | attrs&^windows.FILE_ATTRIBUTE_NORMAL
	}
	attrs |= uint32(flag) & NoFollow
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS // a directory opens for reading
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// longPath gives an absolute path of MAX_PATH characters or more the
// \\?\ prefix that lets the Windows API take it (os.OpenFile does the same).
func longPath(path string) string {
	const maxPath = 248 // the limit for a directory, below MAX_PATH (260)
	if len(path) < maxPath || len(path) >= 4 && (path[:4] == `\\?\` || path[:4] == `\??\`) {
		return path
	}
	abs, err := absPath(path)
	if err != nil {
		return path
	}
	if len(abs) >= 2 && abs[0] == '\\' && abs[1] == '\\' {
		return `\\?\UNC\` + abs[2:] // \\server\share\...
	}
	return `\\?\` + abs
}

// openPrivate opens path without following a symlink (NoFollow opens a
// reparse point itself) and checks what it opened: Windows has no
// O_NOFOLLOW, and a symlink there needs a privilege to create.
func openPrivate(path string, flag int) (*os.File, error) {
	f, err := OpenFile(path, flag|NoFollow, FileMode)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(fi.Mode())}
	}
	return f, nil
}

func setModTime(f *os.File, t time.Time) error {
	return os.Chtimes(f.Name(), t, t)
}
