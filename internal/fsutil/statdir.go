package fsutil

// DirStat is one entry of a directory that StatDir listed: a folder, or
// a regular file with what a stat told of it.
type DirStat struct {
	Name  string
	Dir   bool // a folder (not statted); Size, MTime and ID are zero
	Size  int64
	MTime int64  // ns since the epoch
	ID    FileID // zero where the platform gives none (Windows)
}

// StatDir reads the folder dir once and returns its subfolders and its
// regular files whose names want selects (nil: all), each statted
// without following a symlink (symlinks and other kinds are left out).
// Where the system allows it (Linux, macOS) each file is statted
// relative to the open folder, so that no stat walks the whole path
// again: listing thousands of transcripts costs little more than their
// directory entries. Entries come in directory order.
func StatDir(dir string, want func(name string) bool) ([]DirStat, error) {
	return statDir(dir, want)
}
