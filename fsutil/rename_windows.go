//go:build windows

package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// renameWait bounds how long Rename retries a target another program
// holds open.
const renameWait = time.Second

// Rename renames oldpath to newpath, replacing newpath if it exists, and
// returns once the rename is on disk (MOVEFILE_WRITE_THROUGH: Windows
// cannot flush a directory). A file another program has open cannot
// always be replaced on Windows: where every program that holds it
// allowed deletion (Claude Code's file calls do), it is replaced with
// POSIX semantics and they keep the old file, as on Unix; otherwise Rename
// retries for a second and then returns an error wrapping ErrInUse.
func Rename(oldpath, newpath string) error {
	deadline := time.Now().Add(renameWait)
	delay := 5 * time.Millisecond
	for {
		err := rename(oldpath, newpath)
		if err == nil {
			return nil
		}
		if !inUse(err) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		if !time.Now().Before(deadline) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fmt.Errorf("%w (%v)", ErrInUse, err)}
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// inUse tells the errors Windows gives when a file is open elsewhere.
func inUse(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

func rename(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(longPath(oldpath))
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(longPath(newpath))
	if err != nil {
		return err
	}
	err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
	if err == nil || !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return err
	}
	// The target is open elsewhere (or read-only): a POSIX-semantics
	// rename replaces it where its holders share delete. Where the system
	// or the filesystem has no such rename, MoveFileEx's error stands.
	if perr := renamePOSIX(from, newpath); perr == nil || !errors.Is(perr, windows.ERROR_INVALID_PARAMETER) && !errors.Is(perr, windows.ERROR_NOT_SUPPORTED) && !errors.Is(perr, windows.ERROR_INVALID_FUNCTION) {
		return perr
	}
	return err
}

// fileRenameInfo is FILE_RENAME_INFO with the Flags of FileRenameInfoEx.
type fileRenameInfo struct {
	Flags          uint32
	RootDirectory  windows.Handle
	FileNameLength uint32
	FileName       [1]uint16
}

// renamePOSIX renames the file from to newpath with
// FILE_RENAME_FLAG_POSIX_SEMANTICS (Windows 10 1709 and later, NTFS),
// then flushes it as MOVEFILE_WRITE_THROUGH would.
func renamePOSIX(from *uint16, newpath string) error {
	abs, err := absPath(newpath)
	if err != nil {
		return err
	}
	target, err := windows.UTF16FromString(longPath(abs))
	if err != nil {
		return err
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(from, windows.DELETE|windows.GENERIC_WRITE, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	flush := err == nil
	if err != nil { // a read-only file: rename it without the flush
		h, err = windows.CreateFile(from, windows.DELETE, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
		if err != nil {
			return err
		}
	}
	defer windows.CloseHandle(h)
	// The buffer holds the struct and the name with its terminating NUL;
	// uint64s keep it aligned for the handle field.
	off := unsafe.Offsetof(fileRenameInfo{}.FileName)
	size := off + uintptr(len(target))*2
	buf := make([]uint64, (size+7)/8)
	info := (*fileRenameInfo)(unsafe.Pointer(&buf[0]))
	info.Flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS
	info.FileNameLength = uint32(len(target)-1) * 2
	copy(unsafe.Slice(&info.FileName[0], len(target)), target)
	if err := windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, (*byte)(unsafe.Pointer(&buf[0])), uint32(size)); err != nil {
		return err
	}
	if flush {
		return windows.FlushFileBuffers(h)
	}
	return nil
}

// absPath is filepath.Abs with backslashes.
func absPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Clean(abs), nil
}
