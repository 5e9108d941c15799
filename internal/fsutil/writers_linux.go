package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Writers returns the ids of the other processes that have the file at
// path (fi describes it) open for writing, read from /proc/<pid>/fd and
// fdinfo. A descriptor counts when its link names path, or path
// " (deleted)" as the kernel shows a file renamed over, it is the same
// file, and its flags allow writing: only such links are followed, never
// a descriptor on another filesystem (a hung network mount would block).
// ok is false where /proc cannot tell (not Linux, or no /proc). Processes
// whose descriptors this user may not read (another user's) are not
// listed.
//
// A rewrite uses it after renaming its new file over the old one: from
// then on nobody can open the old file by its path, so once no process
// holds it open for writing, nothing can write to it any more, and there
// is no need to wait for a late append.
func Writers(path string, fi os.FileInfo) (pids []int, ok bool) {
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
			if st, err := os.Stat(link); err == nil && os.SameFile(st, fi) && writable(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, found
}

// writable reads a descriptor's flags from its fdinfo file ("flags:" in
// octal) and reports whether they allow writing. A descriptor whose
// flags cannot be read counts as writable.
func writable(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				return true
			}
			return flags&uint64(os.O_WRONLY|os.O_RDWR) != 0
		}
	}
	return true
}

// OpenForWriting scans /proc once and returns, for every file under root
// that another process holds open for writing, the ids of those
// processes. It is Writers for many files at once: a listing of
// thousands of sessions reads /proc once, not once per file. Only links
// whose target starts with root are followed. ok is false where /proc
// cannot tell.
func OpenForWriting(root string) (files map[FileID][]int, ok bool) {
	return OpenForWritingUnder([]string{root})
}

// OpenForWritingUnder is OpenForWriting for several roots at once (a
// config dir and the targets of its symlinked project folders): each root
// is resolved, and a descriptor counts when its target lies under any.
func OpenForWritingUnder(roots []string) (files map[FileID][]int, ok bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	prefixes := make([]string, 0, len(roots))
	for _, root := range roots {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		prefixes = append(prefixes, strings.TrimSuffix(root, "/")+"/")
	}
	under := func(target string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(target, p) {
				return true
			}
		}
		return false
	}
	self := os.Getpid()
	files = map[FileID][]int{}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		ok = true
		if pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link := filepath.Join(dir, fd.Name())
			target, err := os.Readlink(link)
			if err != nil || !under(target) {
				continue
			}
			st, err := os.Stat(link)
			if err != nil || !st.Mode().IsRegular() || !writable(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				continue
			}
			id := IDOf(st)
			if n := len(files[id]); n == 0 || files[id][n-1] != pid {
				files[id] = append(files[id], pid)
			}
		}
	}
	return files, ok
}
