package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/internal/fsutil"
	"ccm/sessions"
)

// plan places every file: where it goes (checked against the scope and
// the folders on the way), whether it is there already, whether another
// file is in its way. Without Force a file in the way is refused; a file
// in the way that is not the session's is refused even with it.
func (o *ExtractOptions) plan(sc scope, m *Manifest, configDir string, x *Extracted) ([]*placed, error) {
	var files []*placed
	var conflict *placed
	for _, e := range m.Files {
		kind, err := sc.file(e.Path)
		if err != nil {
			return nil, err
		}
		dest, err := sc.checkDest(configDir, e.Path)
		if err != nil {
			return nil, err
		}
		p := &placed{e: e, dest: dest, kind: kind}
		files = append(files, p)
		fi, err := os.Lstat(dest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		switch {
		case fi.Size() == e.Size && sameContent(dest, e):
			p.done = true // put back by an interrupted run, or the same file
		case o.resume && !o.Force:
			// The interrupted run put it there, and it was written since.
			p.done, p.kept = true, true
			x.Kept = append(x.Kept, dest)
		default:
			if kind == kindLegacyAgent && !OwnAgent(dest, sc.id) {
				return nil, fmt.Errorf("%s: %w: an agent file of another session is there", dest, ErrForeign)
			}
			p.conflict = true
			if conflict == nil {
				conflict = p
			}
		}
	}
	for _, d := range m.Dirs {
		if _, err := sc.checkDest(configDir, d.Path); err != nil {
			return nil, err
		}
	}
	if conflict != nil && !o.Force {
		return nil, fmt.Errorf("%s %w", conflict.dest, ErrTargetExists)
	}
	return files, nil
}

// OwnAgent reports whether a flat agent file's records name session id.
func OwnAgent(path, id string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	pk, err := sessions.PeekFile(path, fi.Size())
	return err == nil && pk.SessionID == id
}

// missingDirs lists, parents first, the folders the files and the
// manifest's folders need that do not exist yet (relative paths).
func missingDirs(configDir string, sc scope, m *Manifest, files []*placed) []string {
	need := map[string]bool{}
	add := func(rel string) {
		for d := rel; d != "." && d != "" && !need[d]; d = pathDir(d) {
			if !sc.mayCreate(d) {
				return
			}
			need[d] = true
		}
	}
	for _, d := range m.Dirs {
		add(d.Path)
	}
	for _, f := range files {
		if !f.done {
			add(pathDir(f.e.Path))
		}
	}
	var out []string
	for d := range need {
		if _, err := os.Lstat(filepath.Join(configDir, filepath.FromSlash(d))); errors.Is(err, fs.ErrNotExist) {
			out = append(out, d)
		}
	}
	sort.Strings(out) // parents first
	return out
}

func pathDir(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

// commit moves the staged files into place: files in the way first to
// backups (Force), then every file with the transcript last, then their
// mtimes and the session folders' modes, then an fsync of each folder.
func (o *ExtractOptions) commit(configDir string, sc scope, m *Manifest, files []*placed) error {
	stamp := o.Now.Format("20060102_150405.000")
	for _, p := range files {
		if p.conflict && p.tmp != "" {
			if _, err := os.Lstat(p.dest); err == nil {
				if err := fsutil.Rename(p.dest, p.dest+".backup."+stamp); err != nil {
					return err
				}
			}
		}
	}
	order := append([]*placed(nil), files...)
	sort.SliceStable(order, func(i, j int) bool { return order[j].kind == kindTranscript && order[i].kind != kindTranscript })
	syncDirs := map[string]bool{}
	moved := 0
	for _, p := range order {
		if p.tmp == "" {
			continue
		}
		if err := fsutil.Rename(p.tmp, p.dest); err != nil {
			return err
		}
		syncDirs[filepath.Dir(p.dest)] = true
		if moved++; moved == 1 {
			step("unarchive-renaming")
		}
	}
	for _, p := range files {
		if p.tmp == "" && !p.done {
			continue
		}
		if p.kept {
			continue
		}
		mt := p.e.MTime
		if o.Touch {
			mt = o.Now
		}
		if err := os.Chtimes(p.dest, mt, mt); err != nil {
			return err
		}
	}
	dirs := append([]Entry(nil), m.Dirs...)
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].Path > dirs[j].Path }) // deepest first
	for _, d := range dirs {
		p := filepath.Join(configDir, filepath.FromSlash(d.Path))
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		os.Chmod(p, d.Mode.Perm()&^0o022|0o700)
		os.Chtimes(p, d.MTime, d.MTime)
		syncDirs[filepath.Dir(p)] = true
	}
	for d := range syncDirs {
		if err := fsutil.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
