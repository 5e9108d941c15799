package fsutil

import "io/fs"

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

// listed sorts a directory entry as StatDir does: a folder is added to
// out at once; a regular file that want selects (nil: every one) is to
// be statted (stat is true); anything else is left out.
func listed(e fs.DirEntry, want func(name string) bool, out *[]DirStat) (stat bool) {
	switch t := e.Type(); {
	case t.IsDir():
		*out = append(*out, DirStat{Name: e.Name(), Dir: true})
		return false
	case !t.IsRegular():
		return false
	}
	return want == nil || want(e.Name())
}
