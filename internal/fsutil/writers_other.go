//go:build !linux && !darwin && !windows

package fsutil

import "os"

// Writers cannot tell here: ok is false, and callers take the cautious
// choice.
func Writers(path string, fi os.FileInfo) (pids []int, ok bool) {
	return nil, false
}

// OpenForWriting cannot tell here: ok is false.
func OpenForWriting(root string) (files map[FileID][]int, ok bool) {
	return nil, false
}

// OpenForWritingUnder cannot tell here: ok is false.
func OpenForWritingUnder(roots []string) (files map[FileID][]int, ok bool) {
	return nil, false
}
