package fsutil

import "os"

// FileID identifies a file by device and inode, as os.SameFile does.
type FileID struct{ Dev, Ino uint64 }

// IDOf returns the FileID of a file's os.FileInfo (zero where the platform
// gives none: Windows keeps a file's index out of os.FileInfo).
func IDOf(fi os.FileInfo) FileID {
	return idOf(fi)
}
