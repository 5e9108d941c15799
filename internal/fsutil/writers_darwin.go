package fsutil

import (
	"os"
	"path/filepath"
)

// Writers returns the ids of the other processes that have the file fi
// describes open for writing, found by device and inode with proc_info(2)
// (what lsof uses), so also once another file has been renamed over path.
// ok is false where that cannot be read right (see probe). Processes of
// other users are not listed unless ccm runs as root.
func Writers(path string, fi os.FileInfo) (pids []int, ok bool) {
	probe()
	if !probeFiles {
		return nil, false
	}
	want := IDOf(fi)
	all, err := processes()
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	var buf []byte
	for _, pid := range all {
		if pid == self {
			continue
		}
		found := false
		vnodes(pid, &buf, func(v openVnode) {
			found = found || v.id == want && v.writable
		})
		if found {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// OpenForWriting returns, for every file under root that another process
// holds open for writing, the ids of those processes: Writers for many
// files at once. ok is false where that cannot be read right.
func OpenForWriting(root string) (files map[FileID][]int, ok bool) {
	return OpenForWritingUnder([]string{root})
}

// OpenForWritingUnder is OpenForWriting for several roots at once. Files
// are told by device and inode, not path: every regular file open for
// writing on a root's device is listed, which includes those under it.
func OpenForWritingUnder(roots []string) (files map[FileID][]int, ok bool) {
	probe()
	if !probeFiles {
		return nil, false
	}
	devs := map[uint64]bool{}
	for _, root := range roots {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if fi, err := os.Stat(root); err == nil {
			devs[IDOf(fi).Dev] = true
		}
	}
	all, err := processes()
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	files = map[FileID][]int{}
	var buf []byte
	for _, pid := range all {
		if pid == self {
			continue
		}
		vnodes(pid, &buf, func(v openVnode) {
			if !v.regular || !v.writable || !devs[v.id.Dev] {
				return
			}
			if n := len(files[v.id]); n == 0 || files[v.id][n-1] != pid {
				files[v.id] = append(files[v.id], pid)
			}
		})
	}
	return files, true
}
