//go:build linux

package fsutil

import (
	"encoding/binary"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"
)

// direntBufs are getdents buffers, reused across listings.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// statDir reads the directory with getdents into a reused buffer and
// stats each file with fstatat relative to it: no os.File, no allocation
// per entry but its name.
func statDir(dir string, want func(name string) bool) ([]DirStat, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []DirStat
	var st unix.Stat_t
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ, raw := b[18], b[19:reclen]
			b = b[reclen:]
			i := 0
			for i < len(raw) && raw[i] != 0 {
				i++
			}
			raw = raw[:i]
			if len(raw) == 0 || raw[0] == '.' && (len(raw) == 1 || len(raw) == 2 && raw[1] == '.') {
				continue
			}
			switch typ {
			case unix.DT_DIR:
				out = append(out, DirStat{Name: string(raw), Dir: true})
				continue
			case unix.DT_REG, unix.DT_UNKNOWN:
			default:
				continue
			}
			name := string(raw)
			if typ == unix.DT_REG && want != nil && !want(name) {
				continue
			}
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue // removed since the directory was read
				}
				return nil, &fs.PathError{Op: "lstat", Path: dir + "/" + name, Err: err}
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				out = append(out, DirStat{Name: name, Dir: true})
			case unix.S_IFREG:
				if want == nil || want(name) {
					out = append(out, DirStat{Name: name, Size: st.Size, MTime: st.Mtim.Nano(),
						ID: FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}})
				}
			}
		}
	}
}
