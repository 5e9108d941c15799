package sessions

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Walk calls fn for every transcript (*.jsonl, subagent files included)
// under root, skipping temp files (backups do not end in .jsonl). A
// symlink is not followed, but for root itself: the one symlink rule
// (transcript.ProjectFolders) is applied by the selection, which walks
// each project folder as a root. A folder under root that cannot be read
// is passed to skip and the walk carries on; with skip nil it fails the
// walk.
func Walk(root string, fn func(path string, d fs.DirEntry) error, skip func(path string, err error)) error {
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A trailing separator makes the walk's first Lstat follow it.
		root += string(filepath.Separator)
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if skip == nil || path == root {
				return err
			}
			skip(path, err)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".jsonl") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		return fn(path, d)
	})
}
