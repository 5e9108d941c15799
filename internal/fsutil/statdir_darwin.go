package fsutil

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

func statDir(dir string, want func(name string) bool) ([]DirStat, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	out := make([]DirStat, 0, len(entries))
	var statErr error
	cerr := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		for _, e := range entries {
			name := e.Name()
			if !listed(e, want, &out) {
				continue
			}
			if err := unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue // removed since the directory was read
				}
				statErr = &fs.PathError{Op: "lstat", Path: dir + string(os.PathSeparator) + name, Err: err}
				return
			}
			if st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			out = append(out, DirStat{Name: name, Size: st.Size, MTime: st.Mtim.Nano(),
				ID: FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}})
		}
	})
	if cerr != nil {
		return nil, cerr
	}
	return out, statErr
}
