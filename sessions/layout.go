// Package sessions finds the sessions of a Claude Code config directory
// and what belongs to each (subagent transcripts, tool results, purge
// backups, temp files), and reads what a listing shows from each
// transcript's head and tail only.
package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// ErrNoConfigDir is returned when the Claude config directory is missing.
var ErrNoConfigDir = transcript.ErrNoConfigDir

// File is one file of a session.
type File struct {
	Path    string
	Size    int64
	ModTime time.Time
	Mode    fs.FileMode
	ID      fsutil.FileID
}

// StatFile describes the file at path (followed if it is a symlink).
func StatFile(path string) (File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return File{}, err
	}
	return fileOf(path, fi), nil
}

func fileOf(path string, fi fs.FileInfo) File {
	return File{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), Mode: fi.Mode(), ID: fsutil.IDOf(fi)}
}

// Project is one project folder under <config>/projects.
type Project struct {
	Folder string // encoded folder name
	Dir    string // its path (a symlinked folder is listed under its link)
	Linked bool   // a symlink to a folder kept elsewhere
}

// ListProjects lists the project folders of a config dir: every folder
// directly under its projects/, and every symlink there that leads to a
// folder (a project folder kept on another disk, say), listed under the
// link's name. That is the one symlink ccm follows in a config dir: every
// command sees the same projects, and nothing else reached through a
// symlink (a transcript, a folder inside a project) is walked. A missing
// config dir is an error; a config dir without projects/ has none.
func ListProjects(configDir string) ([]Project, error) {
	if err := transcript.CheckConfigDir(configDir); err != nil {
		return nil, err
	}
	root := transcript.ProjectsDir(configDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Project
	for _, e := range entries {
		p := Project{Folder: e.Name(), Dir: filepath.Join(root, e.Name())}
		switch {
		case e.IsDir():
			out = append(out, p)
		case e.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(p.Dir); err == nil && fi.IsDir() {
				p.Linked = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Session is one main transcript and the files that belong to it: the
// one model of a session every command shares.
type Session struct {
	ID     string
	Folder string
	Dir    string // project folder
	Main   File   // <id>.jsonl
	// Companion holds the files under <id>/: subagents/** and
	// tool-results/**, and anything else there.
	Companion     []File
	CompanionDirs []string // <id>/ and its subfolders, parents first
	Legacy        []File   // flat agent-*.jsonl files of this session (older versions)
	Backups       []File   // <id>.jsonl.backup.*
	Temps         []File   // .<id>.jsonl.ccm-tmp-* left by killed ccm runs
}

// TranscriptPath is the main transcript's path.
func (s *Session) TranscriptPath() string { return s.Main.Path }

// CompanionDir is <project>/<id>/.
func (s *Session) CompanionDir() string { return filepath.Join(s.Dir, s.ID) }

// IsSubagent reports whether a companion file is a subagent transcript.
func IsSubagent(rel string) bool {
	return strings.HasPrefix(filepath.ToSlash(rel), "subagents/") && strings.HasSuffix(rel, ".jsonl")
}

// IsToolResult reports whether a companion file is a spilled tool output.
func IsToolResult(rel string) bool {
	return strings.HasPrefix(filepath.ToSlash(rel), "tool-results/")
}

// Folder is what one readdir of a project folder finds.
type Folder struct {
	Project
	Sessions []*Session
	// Orphans are companion folders <id>/ without their <id>.jsonl.
	Orphans []*Session
	// Agents are flat agent-*.jsonl files (older layouts); ScanFolder
	// leaves attaching them to sessions to the caller, which reads them.
	Agents []File
	// Other holds the rest (memory/, unknown files), for du.
	Other []File
	// Errors are per-file problems met while listing.
	Errors []error
}

// ScanFolder lists one project folder: sessions with their companion
// files, backups and temp files, legacy agent files, orphaned companion
// folders. It stats every file (as du does) and reads none.
func ScanFolder(p Project) (*Folder, error) { return scanFolder(p, "") }

// ScanSession is ScanFolder for the one session id of a project folder
// (nil when its transcript is not there): the other sessions' files are
// not looked at.
func ScanSession(p Project, id string) (*Session, error) {
	f, err := scanFolder(p, id)
	if err != nil {
		return nil, err
	}
	if len(f.Errors) > 0 {
		return nil, f.Errors[0]
	}
	for _, s := range f.Sessions {
		return s, nil
	}
	return nil, nil
}

// scanFolder is ScanFolder, for the files of session only when it is set.
func scanFolder(p Project, only string) (*Folder, error) {
	entries, err := os.ReadDir(p.Dir)
	if err != nil {
		return nil, err
	}
	f := &Folder{Project: p}
	skip := func(id string) bool { return only != "" && id != only }
	byID := map[string]*Session{}
	get := func(id string) *Session {
		s := byID[id]
		if s == nil {
			s = &Session{ID: id, Folder: p.Folder, Dir: p.Dir}
			byID[id] = s
		}
		return s
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(p.Dir, name)
		if only != "" && !strings.HasPrefix(strings.TrimPrefix(name, "."), only) && !strings.HasPrefix(name, "agent-") {
			continue // not the session's (legacy agent files may be): cheaper than a stat
		}
		if e.IsDir() {
			if name == "memory" {
				if only == "" {
					f.Other = append(f.Other, walkFiles(path, nil, &f.Errors)...)
				}
				continue
			}
			if skip(name) {
				continue
			}
			s := get(name)
			s.CompanionDirs = append(s.CompanionDirs, path)
			s.Companion = walkFiles(path, &s.CompanionDirs, &f.Errors)
			continue
		}
		fi, err := e.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.Errors = append(f.Errors, err)
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		file := fileOf(path, fi)
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".jsonl.ccm-tmp-"):
			if id := strings.TrimPrefix(name[:strings.Index(name, ".jsonl.ccm-tmp-")], "."); !skip(id) {
				get(id).Temps = append(get(id).Temps, file)
			}
		case strings.Contains(name, ".jsonl.backup."):
			if id := name[:strings.Index(name, ".jsonl.backup.")]; !skip(id) {
				get(id).Backups = append(get(id).Backups, file)
			}
		case strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ".jsonl"):
			f.Agents = append(f.Agents, file)
		case transcript.IsSessionFileName(name):
			if id := strings.TrimSuffix(name, ".jsonl"); !skip(id) {
				get(id).Main = file
			}
		case only == "":
			f.Other = append(f.Other, file)
		}
	}
	for _, s := range byID {
		if s.Main.Path != "" {
			f.Sessions = append(f.Sessions, s)
		} else if len(s.CompanionDirs) > 0 {
			f.Orphans = append(f.Orphans, s)
		} else {
			// Backups or temps of a transcript that is gone: du counts
			// them; clean may remove them.
			f.Orphans = append(f.Orphans, s)
		}
	}
	sort.Slice(f.Sessions, func(i, j int) bool { return f.Sessions[i].ID < f.Sessions[j].ID })
	sort.Slice(f.Orphans, func(i, j int) bool { return f.Orphans[i].ID < f.Orphans[j].ID })
	return f, nil
}

// walkFiles lists the regular files under dir (symlinks are not
// followed), adding subfolders to dirs when it is not nil.
func walkFiles(dir string, dirs *[]string, errs *[]error) []File {
	var out []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			*errs = append(*errs, err)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if dirs != nil && path != dir {
				*dirs = append(*dirs, path)
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		out = append(out, fileOf(path, fi))
		return nil
	})
	if err != nil {
		*errs = append(*errs, err)
	}
	return out
}

// Related lists the files outside the project folder that belong to a
// session: file-history/<id>/**, todos/<id>-*.json and debug/<id>.txt.
// dirs receives file-history's folders, parents first.
func Related(configDir, id string) (files []File, dirs []string, errs []error) {
	return RelatedIn(configDir, id, nil)
}

// Todos indexes <config>/todos/*.json by every prefix that ends before a
// '-', so that the files of session id (todos/<id>-*.json) are found
// without listing the folder again: a batch over thousands of sessions
// would otherwise read the whole folder once per session.
type Todos map[string][]string

// ReadTodos lists <config>/todos once. A missing folder has none.
func ReadTodos(configDir string) Todos {
	dir := filepath.Join(configDir, "todos")
	entries, _ := os.ReadDir(dir)
	t := Todos{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		stem := strings.TrimSuffix(name, ".json")
		for i := 0; i < len(stem); i++ {
			if stem[i] == '-' {
				t[stem[:i]] = append(t[stem[:i]], filepath.Join(dir, name))
			}
		}
	}
	return t
}

// RelatedIn is Related with the todos folder already listed (nil: list
// it now).
func RelatedIn(configDir, id string, todos Todos) (files []File, dirs []string, errs []error) {
	fh := filepath.Join(configDir, "file-history", id)
	if fi, err := os.Lstat(fh); err == nil && fi.IsDir() {
		dirs = append(dirs, fh)
		files = append(files, walkFiles(fh, &dirs, &errs)...)
	}
	var matches []string
	if todos != nil {
		matches = todos[id] // sorted: ReadDir lists by name
	} else {
		matches, _ = filepath.Glob(filepath.Join(configDir, "todos", globEscape(id)+"-*.json"))
	}
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
			files = append(files, fileOf(m, fi))
		}
	}
	if fi, err := os.Lstat(filepath.Join(configDir, "debug", id+".txt")); err == nil && fi.Mode().IsRegular() {
		files = append(files, fileOf(filepath.Join(configDir, "debug", id+".txt"), fi))
	}
	return files, dirs, errs
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}
