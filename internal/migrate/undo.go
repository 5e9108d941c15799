package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/tidwall/gjson"

	"ccm/fsutil"
)

// UndoResult says what Undo did with each file of the migration.
type UndoResult struct {
	Manifest string
	Restored []string // put back byte for byte
	Removed  []string // created by migrate, removed again
	Kept     []string // changed since the migration: left as they are, with why
}

// Latest returns the manifest of the newest migration not undone yet, or
// "" when there is none.
func Latest(home string) string {
	ms, _ := filepath.Glob(filepath.Join(home, "backups", "migrate-*", "manifest.json"))
	sort.Strings(ms)
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1]
}

// Undo puts back every file the migration of manifest changed, byte for
// byte with its mode, and removes the files it created. A file changed
// again since is left as it is and reported. The manifest is then renamed
// manifest.undone.json, so a second undo finds the migration before.
func Undo(manifest string, dryRun bool) (*UndoResult, error) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	r := &UndoResult{Manifest: manifest}
	// Check every backup first: refuse before changing anything.
	for _, e := range m.Entries {
		if e.Existed {
			if _, err := os.Stat(e.Backup); err != nil {
				return nil, fmt.Errorf("the backup of %s is missing (%v); nothing was changed", e.Path, err)
			}
		}
	}
	for _, e := range m.Entries {
		cur, err := os.ReadFile(e.Path)
		now := ""
		if err == nil {
			now = sha(cur)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return r, err
		}
		if now != e.After {
			r.Kept = append(r.Kept, e.Path+": changed since the migration, left as it is")
			continue
		}
		if !e.Existed {
			if !dryRun {
				if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return r, err
				}
			}
			if now != "" {
				r.Removed = append(r.Removed, e.Path)
			}
			continue
		}
		if !dryRun {
			b, err := os.ReadFile(e.Backup)
			if err != nil {
				return r, err
			}
			if err := fsutil.MkdirPrivate(filepath.Dir(e.Path)); err != nil {
				return r, err
			}
			if err := fsutil.WriteFileBytes(e.Path, e.Mode, b); err != nil {
				return r, err
			}
			os.Chmod(e.Path, e.Mode) // the umask may have narrowed it
		}
		r.Restored = append(r.Restored, e.Path)
	}
	if !dryRun {
		if err := os.Rename(manifest, filepath.Join(filepath.Dir(manifest), "manifest.undone.json")); err != nil {
			return r, err
		}
	}
	return r, nil
}

func gjsonArray(data []byte, path string) []gjson.Result {
	return gjson.GetBytes(data, path).Array()
}
