package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript/rewrite"
)

// A migration is journaled. Before it changes anything, every file it may
// change is copied under <ccm home>/backups/migrate-<stamp>/ and the
// journal (manifest.json there) lists them in state "applying"; after
// each step the journal records what the files now hold; at the end it
// says "done". An undo says "undoing" before it puts anything back. So a
// run killed at any point leaves a journal that says how to finish:
//
//   - "applying": the migration was cut short. Its files are put back
//     from the backups (a copy is kept of any that holds something the
//     migration did not write), which is the state before; ccm migrate
//     --yes then migrates again from there, ccm migrate --undo stops
//     there.
//   - "undoing": the undo is finished; each file is put back unless it
//     already is.
//   - "done": the state after. --undo puts it back.
//
// Steps are idempotent, so a kill during recovery is recovered the same
// way by the next run.
const (
	stateApplying = "applying"
	stateDone     = "done"
	stateUndoing  = "undoing"
)

// Entry is one file a migration may change.
type Entry struct {
	Path    string      `json:"path"`
	Backup  string      `json:"backup,omitempty"` // its content before; "" when it did not exist
	Mode    fs.FileMode `json:"mode,omitempty"`
	Existed bool        `json:"existed"`
	// Before is the sha256 of the content before ("" when it did not
	// exist); After that of what the migration left ("" when it left no
	// file), set when the journal is done.
	Before string `json:"before_sha256,omitempty"`
	After  string `json:"after_sha256,omitempty"`
	// Written are the contents (sha256) the migration was seen to leave
	// after each of its steps: an interrupted migration recognises its
	// own work by them.
	Written []string `json:"written_sha256,omitempty"`
}

// Manifest is a migration's journal:
// <ccm home>/backups/migrate-<stamp>/manifest.json.
type Manifest struct {
	Time string `json:"time"`
	// State is applying, done or undoing; manifests written before
	// journals have none and are done.
	State string `json:"state,omitempty"`
	// Dirs are the folders the migration may create that did not exist
	// before, deepest last; an undo removes those left empty.
	Dirs    []string `json:"created_dirs,omitempty"`
	Entries []Entry  `json:"files"`
}

// journal is an open Manifest and where it lives.
type journal struct {
	path string
	m    Manifest
}

func loadJournal(path string) (*journal, error) {
	data, err := fsutil.ReadRegular(path, 64<<20)
	if err != nil {
		return nil, err
	}
	j := &journal{path: path}
	if err := json.Unmarshal(data, &j.m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if j.m.State == "" {
		j.m.State = stateDone
	}
	return j, nil
}

// save writes the journal durably (temp file, fsync, rename, directory
// fsync), then passes a crash point.
func (j *journal) save() error {
	data, err := json.MarshalIndent(j.m, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileBytes(j.path, fsutil.FileMode, append(data, '\n')); err != nil {
		return fmt.Errorf("write the migration journal: %w", err)
	}
	crashPoint()
	return nil
}

// dir is the journal's backup folder.
func (j *journal) dir() string { return filepath.Dir(j.path) }

// note records, for every file, what it holds now when the migration
// wrote it, and saves the journal: the end of a step.
func (j *journal) note() error {
	for i := range j.m.Entries {
		e := &j.m.Entries[i]
		cur, ok := current(e.Path)
		if !ok || cur == e.Before || slices.Contains(e.Written, cur) {
			continue
		}
		e.Written = append(e.Written, cur)
	}
	return j.save()
}

// current returns the sha256 of path's content, "" when it does not
// exist; ok is false when it cannot be read.
func current(path string) (sum string, ok bool) {
	b, err := fsutil.ReadRegular(path, 64<<20)
	switch {
	case err == nil:
		return sha(b), true
	case errors.Is(err, fs.ErrNotExist):
		return "", true
	}
	return "", false
}

// UndoResult says what an undo (or the recovery of an interrupted
// migration) did with each file.
type UndoResult struct {
	Manifest string   `json:"manifest"`
	Restored []string `json:"restored,omitempty"` // put back byte for byte
	Removed  []string `json:"removed,omitempty"`  // created by the migration, removed again
	Kept     []string `json:"kept,omitempty"`     // changed since the migration: left as they are, with why
	// Saved are copies of files that an interrupted migration had left
	// holding something it did not write, kept before putting them back.
	Saved []string `json:"saved,omitempty"`
}

// putBack returns every file of the journal to its state before the
// migration and marks the migration undone. A file already back is
// left; one holding what the migration wrote is put back; one holding
// anything else was changed by someone since: after a done migration it
// is kept (Kept), after an interrupted one a copy of it is saved beside
// the backups and it is put back (Saved), so that the next run starts
// from the state before either way. With dryRun nothing is written.
func (j *journal) putBack(dryRun bool) (*UndoResult, error) {
	r := &UndoResult{Manifest: j.path}
	for _, e := range j.m.Entries {
		if e.Existed {
			if _, err := os.Stat(e.Backup); err != nil {
				return nil, fmt.Errorf("the backup of %s is missing (%v); nothing was changed", e.Path, err)
			}
		}
	}
	interrupted := j.m.State == stateApplying
	if !dryRun && j.m.State != stateApplying {
		j.m.State = stateUndoing
		if err := j.save(); err != nil {
			return nil, err
		}
	}
	for i, e := range j.m.Entries {
		before := e.Before
		if e.Existed && before == "" {
			before = sha(readOr(e.Backup)) // a manifest written before journals
		}
		cur, ok := current(e.Path)
		switch {
		case !ok:
			return r, fmt.Errorf("read %s: cannot tell what it holds; nothing more was put back", e.Path)
		case e.Existed && cur == before, !e.Existed && cur == "":
			continue // already as it was
		case cur == e.After && j.m.State != stateApplying && (cur != "" || e.Existed), slices.Contains(e.Written, cur):
			// The migration's own work.
		case interrupted:
			if cur != "" {
				saved := filepath.Join(j.dir(), fmt.Sprintf("%03d-%s.interrupted", i, filepath.Base(e.Path)))
				if !dryRun {
					if err := fsutil.WriteFileBytes(saved, fsutil.FileMode, readOr(e.Path)); err != nil {
						return r, fmt.Errorf("save %s before putting it back: %w", e.Path, err)
					}
				}
				r.Saved = append(r.Saved, e.Path+" (as it was: "+saved+")")
			}
		default:
			r.Kept = append(r.Kept, e.Path+": changed since the migration, left as it is")
			continue
		}
		if dryRun {
			if e.Existed {
				r.Restored = append(r.Restored, e.Path)
			} else if cur != "" {
				r.Removed = append(r.Removed, e.Path)
			}
			continue
		}
		if err := restoreEntry(e); err != nil {
			return r, err
		}
		if e.Existed {
			r.Restored = append(r.Restored, e.Path)
		} else if cur != "" {
			r.Removed = append(r.Removed, e.Path)
		}
		crashPoint()
	}
	if dryRun {
		return r, nil
	}
	for _, e := range j.m.Entries {
		rewrite.RemoveStaleTemps(e.Path) // what a killed write left beside it
	}
	for i := len(j.m.Dirs) - 1; i >= 0; i-- {
		os.Remove(j.m.Dirs[i]) // only an empty folder goes
	}
	// Undone: the next undo finds the migration before this one.
	if err := os.Rename(j.path, filepath.Join(j.dir(), "manifest.undone.json")); err != nil {
		return r, err
	}
	return r, fsutil.SyncDir(j.dir())
}

// restoreEntry puts one file back: its backup, byte for byte with its
// mode, or no file when it did not exist.
func restoreEntry(e Entry) error {
	if !e.Existed {
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := fsutil.ReadRegular(e.Backup, 64<<20)
	if err != nil {
		return err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(e.Path)); err != nil {
		return err
	}
	return fsutil.WriteFileBytes(e.Path, e.Mode, b)
}

// Latest returns the journal of the newest migration not undone yet, or
// "" when there is none.
func Latest(home string) string {
	ms, _ := filepath.Glob(filepath.Join(home, "backups", "migrate-*", "manifest.json"))
	sort.Strings(ms)
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1]
}

// Interrupted returns the journal of a migration or an undo that a kill
// cut short, or "" when the latest one finished.
func Interrupted(home string) string {
	p := Latest(home)
	if p == "" {
		return ""
	}
	if j, err := loadJournal(p); err == nil && j.m.State == stateDone {
		return ""
	}
	return p
}

// Recover finishes what an interrupted migration or undo left: both end
// in the state before the migration (see journal). It returns nil when
// there was nothing to recover.
func Recover(home string) (*UndoResult, error) {
	p := Interrupted(home)
	if p == "" {
		return nil, nil
	}
	j, err := loadJournal(p)
	if err != nil {
		return nil, err
	}
	return j.putBack(false)
}

// Lock takes the lock that keeps two migrations (or a migration and an
// undo) of one ccm home apart; it does not wait.
func Lock(ctx context.Context, home string) (unlock func(), err error) {
	l, err := fsutil.LockFile(ctx, filepath.Join(home, "locks", "migrate.lock"), true, 0)
	if err != nil {
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, fmt.Errorf("another ccm migrate is running (%w)", err)
		}
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// newJournalDir creates the backup folder of a migration started at now,
// with a suffix when one of that name exists.
func newJournalDir(home string, now time.Time) (string, error) {
	base := filepath.Join(home, "backups", "migrate-"+now.UTC().Format("20060102T150405.000Z"))
	if err := fsutil.MkdirPrivate(filepath.Dir(base)); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		dir := base
		if n > 1 {
			dir += "-" + strconv.Itoa(n)
		}
		err := os.Mkdir(dir, fsutil.DirMode)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return "", err
		}
	}
}

// RemoveUnjournaled removes the backup folders that migrations killed
// before their journal was written left: they hold copies of files those
// never changed. The caller holds Lock.
func RemoveUnjournaled(home string) {
	dirs, _ := filepath.Glob(filepath.Join(home, "backups", "migrate-*"))
	for _, d := range dirs {
		if _, err := os.Lstat(filepath.Join(d, "manifest.json")); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d, "manifest.undone.json")); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		os.RemoveAll(d)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
