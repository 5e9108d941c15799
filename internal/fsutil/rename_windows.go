//go:build windows

package fsutil

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// renameWait bounds how long Rename retries a target another program
// holds open.
const renameWait = time.Second

// Rename renames oldpath to newpath, replacing newpath if it exists, and
// returns once the rename is on disk (MOVEFILE_WRITE_THROUGH: Windows
// cannot flush a directory). A file that another program (or ccm itself)
// has open cannot be replaced by a plain rename on Windows. Where every
// program that holds it allowed deletion (Claude Code's file calls and
// OpenFile do), it is replaced all the same and they keep the old file,
// as on Unix: with a POSIX-semantics rename (Windows 10 1709 and later,
// NTFS), else with ReplaceFile, which first moves the old file aside
// under a temp name (removed at once; it goes when its last holder
// closes it). A holder that did not allow deletion makes Rename retry for
// a second and then return an error wrapping ErrInUse.
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
	// rename replaces it where its holders share delete.
	perr := renamePOSIX(from, newpath)
	if perr == nil || !unsupported(perr) {
		return perr
	}
	// No such rename on this system or filesystem (FAT, network shares,
	// Wine): ReplaceFile moves the old file aside, which its holders allow
	// when they share delete, and the new one into its place.
	if rerr := replaceFile(oldpath, newpath); rerr == nil || !inUse(rerr) {
		return rerr
	}
	return err
}

// unsupported tells the errors of a call the system or filesystem lacks.
func unsupported(err error) bool {
	return errors.Is(err, windows.ERROR_INVALID_PARAMETER) || errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION)
}

var procReplaceFileW = windows.NewLazySystemDLL("kernel32.dll").NewProc("ReplaceFileW")

// ReplaceFile's errors (winerror.h).
const (
	errorUnableToRemoveReplaced   = windows.Errno(1175) // nothing changed
	errorUnableToMoveReplacement  = windows.Errno(1176) // nothing changed
	errorUnableToMoveReplacement2 = windows.Errno(1177) // the old file is at the backup name
	replacefileIgnoreMergeErrors  = 0x2
	replacefileIgnoreACLErrors    = 0x4
)

// replaceFile replaces newpath with oldpath by ReplaceFileW, the old file
// going to a temp name beside it (a name the next rewrite's clean-up of
// stale temp files removes, should this process die before it does).
func replaceFile(oldpath, newpath string) error {
	dir, base := filepath.Split(newpath)
	aside := filepath.Join(dir, "."+base+".ccm-tmp-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
	replaced, err := windows.UTF16PtrFromString(longPath(newpath))
	if err != nil {
		return err
	}
	replacement, err := windows.UTF16PtrFromString(longPath(oldpath))
	if err != nil {
		return err
	}
	backup, err := windows.UTF16PtrFromString(longPath(aside))
	if err != nil {
		return err
	}
	r, _, err := procReplaceFileW.Call(uintptr(unsafe.Pointer(replaced)), uintptr(unsafe.Pointer(replacement)), uintptr(unsafe.Pointer(backup)),
		replacefileIgnoreMergeErrors|replacefileIgnoreACLErrors, 0, 0)
	if r == 0 {
		switch {
		case errors.Is(err, errorUnableToMoveReplacement2):
			// The old file was moved aside but the new one not into its
			// place: put the old one back, so that the state is the one
			// before.
			if merr := windows.MoveFileEx(backup, replaced, windows.MOVEFILE_WRITE_THROUGH); merr != nil {
				return fmt.Errorf("%v; the old file is left at %s (%v)", err, aside, merr)
			}
			return windows.ERROR_SHARING_VIOLATION // nothing changed: retry
		case errors.Is(err, errorUnableToRemoveReplaced), errors.Is(err, errorUnableToMoveReplacement):
			return windows.ERROR_SHARING_VIOLATION // nothing changed: retry
		}
		return err
	}
	// The old file goes once its holders close it; its name goes now.
	os.Remove(aside)
	flushPath(newpath)
	return nil
}

// flushPath flushes a file by name, as MOVEFILE_WRITE_THROUGH does after a
// rename (best effort: the data was flushed before the rename).
func flushPath(path string) {
	name, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, windows.GENERIC_WRITE, share, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return
	}
	windows.FlushFileBuffers(h)
	windows.CloseHandle(h)
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
