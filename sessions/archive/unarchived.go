package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"ccm/internal/fsutil"
)

// UnarchivedName is the file, in ccm's home, that records when sessions
// were brought back by unarchive.
const UnarchivedName = "unarchived.json"

// Unarchived records when each session was last brought back by
// unarchive. A session brought back is meant to stay: archive counts its
// idle time from the later of its last write and its unarchive, so that
// an old session is not archived again by the next maintain.
type Unarchived struct {
	Sessions map[string]time.Time `json:"sessions"`
}

// ReadUnarchived reads the record; a missing file is an empty record.
func ReadUnarchived(path string) (*Unarchived, error) {
	u := &Unarchived{Sessions: map[string]time.Time{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, u); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON (remove it: sessions unarchived lately may then be archived again by age)", path)
	}
	if u.Sessions == nil {
		u.Sessions = map[string]time.Time{}
	}
	return u, nil
}

// Since is when the session was unarchived, zero if it was not.
func (u *Unarchived) Since(id string) time.Time { return u.Sessions[id] }

// Save writes the record atomically and durably (the caller holds the
// lock that keeps other writers away, so a temp file of the record is a
// kill's leftover and goes).
func (u *Unarchived) Save(path string) error {
	TidyUnarchived(path)
	data, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err })
}

// TidyUnarchived removes the temp files that a kill while the record at
// path was written left. The caller holds the lock that keeps its writers
// away.
func TidyUnarchived(path string) { removeTemps(path) }
