package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OpenedBy returns the ids of the other processes that have the file at
// path (fi describes it) open, read from /proc/<pid>/fd. A descriptor
// counts when its link names path, or path " (deleted)" as the kernel
// shows a file renamed over, and it is the same file: only such links
// are followed, never a descriptor on another filesystem (a hung network
// mount would block). ok is false where /proc cannot tell (not Linux, or
// no /proc). Processes whose descriptors this user may not read (another
// user's) are not listed.
//
// A rewrite uses it after renaming its new file over the old one: from
// then on the old file can be opened by no one by its path, so once no
// process holds it, nothing can write to it any more, and there is no
// need to wait for a late append.
func OpenedBy(path string, fi os.FileInfo) (pids []int, ok bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	found := false
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		found = true
		if pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			link := filepath.Join(dir, fd.Name())
			target, err := os.Readlink(link)
			if err != nil || !strings.HasPrefix(target, path) || (target != path && target[len(path):] != " (deleted)") {
				continue
			}
			if st, err := os.Stat(link); err == nil && os.SameFile(st, fi) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, found
}
