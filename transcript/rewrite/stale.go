package rewrite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RemoveStaleTemps removes the temp files that Replace, killed before
// its rename, left beside path: regular files in path's directory named
// exactly "." + base(path) + ".ccm-tmp-" and digits, as fsutil.CreateTemp
// names them. Nothing else is touched and no symlink is followed. The
// caller holds path's sidecar lock, so none of them is being written. It
// returns how many it removed and the first error.
func RemoveStaleTemps(path string) (int, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	prefix := "." + base + ".ccm-tmp-"
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, name := range names {
		if !isTempName(name, prefix) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(p); err != nil {
			if first == nil && !errors.Is(err, fs.ErrNotExist) {
				first = err
			}
			continue
		}
		n++
	}
	return n, first
}

// isTempName reports whether name is prefix followed by one or more ASCII
// digits.
func isTempName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}
