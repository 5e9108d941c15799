package install

import (
	"encoding/json"
	"os"
	"path/filepath"

	"ccm/internal/fsutil"
)

// record is <ccm home>/install.json: per settings file, the keys and the
// file install created and the command files it wrote, so uninstall can
// remove exactly those. It is ccm's own file.
type record struct {
	Version int                    `json:"version"`
	Files   map[string]recordEntry `json:"files"`
}

type recordEntry struct {
	Created  []string          `json:"created,omitempty"`
	Commands map[string]string `json:"commands,omitempty"`
	Dirs     []string          `json:"dirs,omitempty"`
	// EnvPrev holds the raw values of env keys install replaced.
	EnvPrev map[string]string `json:"env_prev,omitempty"`
}

func recordPath(home string) string { return filepath.Join(home, "install.json") }

func loadRecord(home string) (record, error) {
	rec := record{Version: 1, Files: map[string]recordEntry{}}
	data, err := os.ReadFile(recordPath(home))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return record{Version: 1, Files: map[string]recordEntry{}}, err
	}
	if rec.Files == nil {
		rec.Files = map[string]recordEntry{}
	}
	return rec, nil
}

func updateRecord(home string, fn func(*record)) error {
	if err := fsutil.MkdirPrivate(home); err != nil {
		return err
	}
	rec, _ := loadRecord(home)
	fn(&rec)
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileBytes(recordPath(home), fsutil.FileMode, append(data, '\n'))
}
