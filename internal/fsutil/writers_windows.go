package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Writers tells whether another process has the file at path (fi
// describes it) open for writing. Windows names no such process without
// a heavier API, but it refuses an open that does not share writing with
// a handle that writes: Writers opens the file for reading and shares
// everything but writing, and a sharing violation means a writer (or a
// reader that shares nothing), reported as the single pid 0. ok is false
// when path no longer names the file fi describes: the old file of a
// rename cannot be opened by name.
func Writers(path string, fi os.FileInfo) (pids []int, ok bool) {
	cur, err := os.Stat(path)
	if err != nil || !os.SameFile(cur, fi) {
		return nil, false
	}
	name, err := windows.UTF16PtrFromString(longPath(path))
	if err != nil {
		return nil, false
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	switch {
	case err == nil:
		windows.CloseHandle(h)
		return nil, true
	case errors.Is(err, windows.ERROR_SHARING_VIOLATION):
		return []int{0}, true
	}
	return nil, false
}

// OpenForWriting cannot list the files open for writing on Windows: ok is
// false, and callers take the cautious choice.
func OpenForWriting(root string) (files map[FileID][]int, ok bool) {
	return nil, false
}

// OpenForWritingUnder is OpenForWriting for several roots.
func OpenForWritingUnder(roots []string) (files map[FileID][]int, ok bool) {
	return nil, false
}
