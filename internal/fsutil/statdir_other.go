//go:build !linux && !darwin

package fsutil

import (
	"errors"
	"io/fs"
	"os"
)

func statDir(dir string, want func(name string) bool) ([]DirStat, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]DirStat, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if !listed(e, want, &out) {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, DirStat{Name: name, Size: fi.Size(), MTime: fi.ModTime().UnixNano(), ID: IDOf(fi)})
	}
	return out, nil
}
