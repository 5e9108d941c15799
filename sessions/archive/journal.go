package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// A pending marker, <root>/<folder>/.<id>.pending beside the archive,
// says that an archive or unarchive of the session began and has not
// ended. Whatever stops it (a kill, a crash, a full disk), the next
// archive, unarchive or maintain finds the marker and finishes the work or
// undoes it (Recover), so that no run stops at "already exists" and no
// file is ever only half moved:
//
//	archive:   marker → archive written, verified, published with its
//	           sidecar → fsync → originals removed → marker removed.
//	           Recovery undoes it while every original is still in place
//	           (removes the archive), and finishes it once one is gone
//	           (removes the originals that match the verified archive).
//	unarchive: marker (phase "stage") → files written to temp files beside
//	           their places, content put into the store and made durable →
//	           marker phase "commit", fsynced → files renamed into place,
//	           the transcript last → archive removed → marker removed.
//	           Recovery undoes a stage (temp files and the folders it made
//	           go) and finishes a commit (files already in place stay,
//	           the others are restored again from the archive).
type pending struct {
	Op        string    `json:"op"`              // "archive" or "unarchive"
	Phase     string    `json:"phase,omitempty"` // unarchive: "stage" or "commit"
	ConfigDir string    `json:"config_dir"`
	Started   time.Time `json:"started"`
	// Unarchive: the folders it created (relative to the config dir), and
	// the options it ran with, which a recovery keeps.
	Created []string `json:"created_dirs,omitempty"`
	Force   bool     `json:"force,omitempty"`
	Touch   bool     `json:"touch,omitempty"`
}

const (
	opArchive    = "archive"
	opUnarchive  = "unarchive"
	phaseStage   = "stage"
	phaseCommit  = "commit"
	markerSuffix = ".pending"
)

// markerPath is the pending marker of an archive.
func markerPath(archive string) string {
	dir, base := filepath.Split(archive)
	return filepath.Join(dir, "."+strings.TrimSuffix(base, Ext)+markerSuffix)
}

// archiveOfMarker is the archive a marker is for.
func archiveOfMarker(marker string) string {
	dir, base := filepath.Split(marker)
	return filepath.Join(dir, strings.TrimSuffix(strings.TrimPrefix(base, "."), markerSuffix)+Ext)
}

// writeMarker writes a marker; durable when it must outlive a power cut
// (an unarchive's commit: files move after it).
func writeMarker(archive string, p *pending, durable bool) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	write := fsutil.WriteFileUnsynced
	if durable {
		write = fsutil.WriteFile
	}
	removeTemps(markerPath(archive)) // a kill while an earlier run wrote it
	return write(markerPath(archive), fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err })
}

// readMarker reads an archive's marker; nil when there is none.
func readMarker(archive string) (*pending, error) {
	data, err := os.ReadFile(markerPath(archive))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &pending{}
	if err := json.Unmarshal(data, p); err != nil || (p.Op != opArchive && p.Op != opUnarchive) {
		return nil, fmt.Errorf("%s: unreadable (%d bytes): remove it after checking %s", markerPath(archive), len(data), archive)
	}
	return p, nil
}

// killAt names a step at which the process kills itself, for tests of
// the binary: $CCM_TEST_ARCHIVE_KILL. No clean-up runs, as with kill -9.
var killAt = os.Getenv("CCM_TEST_ARCHIVE_KILL")

// step marks a point of an archive or unarchive that tests kill at.
func step(name string) {
	if killAt == "" || killAt != name {
		return
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {} // the kill is asynchronous on some systems
}

// Recovered is one unfinished archive or unarchive that Recover finished
// or undid.
type Recovered struct {
	Session string `json:"session"`
	Archive string `json:"archive"`
	Op      string `json:"op"`      // archive, unarchive
	Outcome string `json:"outcome"` // "finished" or "undone"
	Err     error  `json:"-"`
}

// Recover finds the unfinished archives and unarchives of configDir's
// sessions under root and finishes or undoes each (see pending). Markers
// of another config dir are left to it. The caller holds the lock that
// keeps other archives and unarchives away. o gives an unarchive's store;
// its Force and Touch are the interrupted run's.
func Recover(ctx context.Context, root, configDir string, o ExtractOptions) ([]Recovered, error) {
	folders, err := projectFolders(root)
	if err != nil {
		return nil, err
	}
	var out []Recovered
	for _, dir := range folders {
		for _, mk := range withAffixes(dir, ".", markerSuffix) {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			archive := archiveOfMarker(mk)
			p, err := readMarker(archive)
			if err != nil {
				out = append(out, Recovered{Archive: archive, Err: err})
				continue
			}
			if p == nil || !sameDir(p.ConfigDir, configDir) {
				continue
			}
			r := Recovered{Session: strings.TrimSuffix(filepath.Base(archive), Ext), Archive: archive, Op: p.Op}
			r.Outcome, r.Err = recoverOne(ctx, archive, configDir, p, o)
			out = append(out, r)
		}
	}
	return out, nil
}

// recoverOne finishes or undoes the work a marker stands for.
func recoverOne(ctx context.Context, archive, configDir string, p *pending, o ExtractOptions) (string, error) {
	if p.Op == opArchive {
		return recoverArchive(archive, configDir)
	}
	if p.Phase == phaseCommit {
		o.Force, o.Touch, o.resume = p.Force, p.Touch, true
		if _, err := os.Lstat(archive); errors.Is(err, fs.ErrNotExist) {
			// The session is back and the archive gone: its sidecar and
			// the marker were left.
			os.Remove(SidecarPath(archive))
			return "finished", removeMarker(archive)
		}
		if _, err := Extract(ctx, archive, configDir, o); err != nil {
			return "", err
		}
		return "finished", nil
	}
	return "undone", undoStage(archive, configDir, p)
}

// recoverArchive undoes an archive whose originals are all in place, and
// finishes one whose originals began to go.
func recoverArchive(archive, configDir string) (string, error) {
	m, err := ReadSidecar(SidecarPath(archive))
	if errors.Is(err, fs.ErrNotExist) {
		// Not published yet: the originals were never touched.
		return "undone", discard(archive)
	}
	if err != nil {
		return "", err
	}
	var present []Entry
	for _, e := range m.Files {
		if _, err := os.Lstat(filepath.Join(configDir, filepath.FromSlash(e.Path))); err == nil {
			present = append(present, e)
		}
	}
	if len(present) == len(m.Files) {
		return "undone", discard(archive)
	}
	dirs := map[string]bool{}
	if len(present) == 0 {
		removeEmptyDirs(configDir, m.Dirs, dirs)
		return "finished", removeMarker(archive)
	}
	// Some originals are gone: the archive holds them. Remove the rest
	// once the archive is known good and each is what it holds.
	if _, err := Verify(archive); err != nil {
		return "", fmt.Errorf("an interrupted archive left part of the session in place, and the archive does not verify (%w): both kept", err)
	}
	var changed []string
	for _, e := range present {
		p := filepath.Join(configDir, filepath.FromSlash(e.Path))
		if !sameFile(p, e) {
			changed = append(changed, p)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		dirs[filepath.Dir(p)] = true
	}
	removeEmptyDirs(configDir, m.Dirs, dirs)
	for d := range dirs {
		fsutil.SyncDir(d)
	}
	if len(changed) > 0 {
		return "", fmt.Errorf("an interrupted archive left %s, which differs from the archived copy: both kept (move one away)", changed[0])
	}
	return "finished", removeMarker(archive)
}

// undoStage removes what an unarchive staged: its temp files beside each
// file's place and the folders it created, when empty.
func undoStage(archive, configDir string, p *pending) error {
	m, err := ReadSidecar(SidecarPath(archive))
	if err == nil {
		var sc scope
		if sc, err = scopeOf(archive); err == nil {
			err = sc.checkManifest(m)
		}
		if err != nil {
			return err
		}
		for _, e := range m.Files {
			removeTemps(filepath.Join(configDir, filepath.FromSlash(e.Path)))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sc, err := scopeOf(archive)
	if err != nil {
		return err
	}
	created := append([]string(nil), p.Created...)
	sort.Sort(sort.Reverse(sort.StringSlice(created))) // deepest first
	for _, rel := range created {
		if safeRel(rel) != nil || !sc.mayCreate(rel) {
			continue
		}
		os.Remove(filepath.Join(configDir, filepath.FromSlash(rel))) // only when empty
	}
	return removeMarker(archive)
}

// discard removes an archive that is not the only copy of anything, with
// its sidecar, temp files and marker.
func discard(archive string) error {
	removeTemps(archive)
	removeTemps(SidecarPath(archive))
	for _, p := range []string{archive, SidecarPath(archive)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return removeMarker(archive)
}

// removeSynced removes a file and records that in its folder (unless
// the folder went too: another session's unarchive removes it when empty).
func removeSynced(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fsutil.SyncDir(filepath.Dir(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeTemps removes the temp files fsutil.CreateTemp made for path.
func removeTemps(path string) {
	dir, base := filepath.Split(path)
	for _, t := range withAffixes(dir, "."+base+".ccm-tmp-", "") {
		os.Remove(t)
	}
}

// withAffixes lists the files of dir whose names start with prefix and
// end with suffix, sorted.
func withAffixes(dir, prefix, suffix string) []string {
	entries, _ := os.ReadDir(dir) // sorted by name
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) && len(n) > len(prefix)+len(suffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// removeEmptyDirs removes the session's folders that are empty, deepest
// first, noting their parents in changed.
func removeEmptyDirs(configDir string, dirs []Entry, changed map[string]bool) {
	paths := make([]string, 0, len(dirs))
	for _, d := range dirs {
		paths = append(paths, filepath.Join(configDir, filepath.FromSlash(d.Path)))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	for _, p := range paths {
		if os.Remove(p) == nil {
			changed[filepath.Dir(p)] = true
		}
	}
}

// sameFile reports whether the file at p is the archived entry e: its
// size, mtime and SHA-256.
func sameFile(p string, e Entry) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != e.Size || !fi.ModTime().Equal(e.MTime) {
		return false
	}
	return sameContent(p, e)
}

// sameContent reports whether the file at p holds e's bytes.
func sameContent(p string, e Entry) bool {
	f, err := fsutil.OpenRegular(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return err == nil && n == e.Size && hex.EncodeToString(h.Sum(nil)) == e.SHA256
}

func sameDir(a, b string) bool {
	return filepath.Clean(a) == filepath.Clean(b)
}

// removeMarker removes an archive's marker (and a temp file a write of it
// left).
func removeMarker(archive string) error {
	removeTemps(markerPath(archive))
	return removeSynced(markerPath(archive))
}

// Pending reports whether an archive or unarchive of the archive at path
// began and has not ended (its marker is there).
func Pending(path string) bool {
	_, err := os.Lstat(markerPath(path))
	return err == nil
}
