package sessions

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/transcript"
)

// Walk calls fn for every transcript (*.jsonl, subagent files included)
// under root, skipping temp files (backups do not end in .jsonl). A
// symlink is not followed, but for root itself: the one symlink rule
// (ListProjects) is applied by the selection, which walks
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

// arg adds what one FILE|DIR argument names: a file as it is, a folder
// walked for transcripts.
func (s *Selection) arg(ctx context.Context, configDir, a string, o SelectOptions) error {
	fi, err := os.Stat(a)
	if err != nil {
		return &FileError{a, err}
	}
	if !fi.IsDir() {
		t := Target{Path: a, Named: true, File: fileOf(a, fi), Size: fi.Size()}
		if p, rel, ok := projectOfDir(configDir, filepath.Dir(a)); ok && rel == "." && p.Folder != "" {
			t.Project = p.Folder
			if transcript.IsSessionFileName(filepath.Base(a)) && (o.Sessions || s.MinSize > 0) {
				ss, err := ScanSession(p, trimJSONL(filepath.Base(a)))
				if err != nil {
					return &FileError{a, err}
				}
				if ss != nil {
					t.Session, t.Size = ss, ss.Bytes()
				}
			}
		}
		s.add(t, o)
		return nil
	}
	p, rel, inside := projectOfDir(configDir, a)
	if !inside && !s.Recursive {
		return &UsageError{fmt.Sprintf("%s: not inside %s; ccm walks only the config dir's transcripts (%s walks this folder too)",
			a, transcript.ProjectsDir(configDir), RecursiveFlag)}
	}
	type root struct {
		dir     string
		project Project // zero outside the project folders
		top     bool    // dir is the project folder itself
	}
	var roots []root
	switch {
	case inside && p.Folder == "":
		// projects/ itself: every project folder, symlinked ones too.
		ps, err := ListProjects(configDir)
		if err != nil {
			return err
		}
		for _, q := range ps {
			roots = append(roots, root{dir: q.Dir, project: q, top: true})
		}
	case inside:
		roots = append(roots, root{dir: a, project: p, top: rel == "."})
	default:
		roots = append(roots, root{dir: a})
	}
	before := len(s.Todo) + len(s.Skipped)
	failed := len(s.Failed)
	for _, r := range roots {
		if err := ctx.Err(); err != nil {
			return err
		}
		var folder *Folder
		if r.top && (o.Sessions || s.MinSize > 0) {
			f, err := ScanFolder(r.project)
			if err != nil {
				s.Failed = append(s.Failed, failureOf(r.dir, err))
				continue
			}
			for _, e := range f.Errors {
				s.Failed = append(s.Failed, failureOf(r.dir, e))
			}
			folder = f
			s.whole[f.Dir] = f
		}
		var found []Target
		err := Walk(r.dir, func(path string, d fs.DirEntry) error {
			fi, err := d.Info()
			if err != nil {
				s.Failed = append(s.Failed, failureOf(path, err))
				return nil
			}
			t := Target{Path: path, Project: r.project.Folder, File: fileOf(path, fi), Size: fi.Size()}
			if r.top && filepath.Dir(filepath.Clean(path)) == filepath.Clean(r.dir) && transcript.IsSessionFileName(d.Name()) {
				if ss := sessionIn(folder, r.project, trimJSONL(d.Name()), o, s.MinSize > 0); ss != nil {
					t.Session, t.Size = ss, ss.Bytes()
				}
			}
			found = append(found, t)
			return nil
		}, func(path string, err error) { s.Failed = append(s.Failed, failureOf(path, err)) })
		if err != nil {
			if len(roots) > 1 {
				s.Failed = append(s.Failed, failureOf(r.dir, err))
				continue
			}
			return &FileError{a, err}
		}
		sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
		for _, t := range found {
			s.add(t, o)
		}
	}
	if len(s.Todo)+len(s.Skipped) == before && len(s.Failed) == failed {
		return fmt.Errorf("%s: no transcripts (*.jsonl) in this directory", a)
	}
	return nil
}

// sessionIn is session id of a walked project folder: from the folder's
// listing when there is one, else looked up alone when asked for.
func sessionIn(folder *Folder, p Project, id string, o SelectOptions, size bool) *Session {
	if folder != nil {
		for _, ss := range folder.Sessions {
			if ss.ID == id {
				return ss
			}
		}
		return nil
	}
	if !o.Sessions && !size {
		return nil
	}
	ss, _ := ScanSession(p, id)
	return ss
}
