package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/transcript"
)

// ErrNoSession is returned when no session matches a lookup.
var ErrNoSession = errors.New("no session found")

// ErrInvalidID is a session id that cannot be one.
var ErrInvalidID = errors.New("invalid session id")

// MinPrefix is the shortest prefix of a session id that names it; the
// tables show 8 characters. A whole id names its session whatever its
// length.
const MinPrefix = 4

// AmbiguousError is a session id prefix that starts several sessions' ids.
type AmbiguousError struct {
	Prefix  string
	Matches []Match
}

// Match is one session an id prefix matched.
type Match struct {
	ID     string
	Folder string // project folder, or "" for an archived session
	Path   string
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session id %s is ambiguous: it starts %d sessions' ids (give more of it)", e.Prefix, len(e.Matches))
	for _, m := range e.Matches {
		b.WriteString("\n" + m.ID)
		if m.Folder != "" {
			b.WriteString("  " + m.Folder)
		}
	}
	return b.String()
}

// CheckID refuses what cannot be a session id or a prefix of one: it
// would name a path (a separator, "." or "..") or say nothing. A
// trailing .jsonl is dropped.
func CheckID(id string) (string, error) {
	id = strings.TrimSuffix(id, ".jsonl")
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", fmt.Errorf("%w %q", ErrInvalidID, id)
	}
	return id, nil
}

// MatchID picks the one of matches whose id is id, or else the one whose
// id starts with it (a prefix of at least MinPrefix characters). Several
// give an *AmbiguousError; none returns false.
func MatchID(id string, matches []Match) (Match, bool, error) {
	var starts []Match
	for _, m := range matches {
		if m.ID == id {
			return m, true, nil
		}
		if strings.HasPrefix(m.ID, id) {
			starts = append(starts, m)
		}
	}
	switch {
	case len(starts) == 0 || len(id) < MinPrefix:
		return Match{}, false, nil
	case len(starts) > 1:
		sort.Slice(starts, func(i, j int) bool { return starts[i].ID+starts[i].Folder < starts[j].ID+starts[j].Folder })
		return Match{}, false, &AmbiguousError{Prefix: id, Matches: starts}
	}
	return starts[0], true, nil
}

// eachSessionFile calls fn with every session transcript (a regular
// <id>.jsonl) of the projects' folders; a folder that went is skipped.
func eachSessionFile(projects []Project, fn func(p Project, name string)) error {
	for _, p := range projects {
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return err
		}
		for _, e := range entries {
			if name := e.Name(); e.Type().IsRegular() && transcript.IsSessionFileName(name) {
				fn(p, name)
			}
		}
	}
	return nil
}

// IDs lists the sessions of a config dir: each id with its transcript.
func IDs(configDir string) (map[string]string, error) {
	projects, err := ListProjects(configDir)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	err = eachSessionFile(projects, func(p Project, name string) {
		ids[strings.TrimSuffix(name, ".jsonl")] = filepath.Join(p.Dir, name)
	})
	return ids, err
}

// Find finds the session with this id, or whose id starts with it, among
// the sessions of projects (every project of the config dir when nil).
// It reads the project folders' names only, then the one session's files.
func Find(configDir, id string, projects []Project) (*Session, error) {
	id, err := CheckID(id)
	if err != nil {
		return nil, err
	}
	if projects == nil {
		if projects, err = ListProjects(configDir); err != nil {
			return nil, err
		}
	}
	var matches []Match
	at := map[string]Project{}
	err = eachSessionFile(projects, func(p Project, name string) {
		if strings.HasPrefix(name, id) {
			path := filepath.Join(p.Dir, name)
			matches = append(matches, Match{ID: strings.TrimSuffix(name, ".jsonl"), Folder: p.Folder, Path: path})
			at[path] = p
		}
	})
	if err != nil {
		return nil, err
	}
	m, ok, err := MatchID(id, matches)
	if err != nil {
		return nil, err
	}
	if !ok {
		hint := ""
		if len(matches) > 0 {
			hint = fmt.Sprintf(" (a session id prefix needs %d characters or more)", MinPrefix)
		}
		return nil, fmt.Errorf("%w with id %s under %s%s", ErrNoSession, id, transcript.ProjectsDir(configDir), hint)
	}
	s, err := ScanSession(at[m.Path], m.ID)
	if err == nil && s == nil {
		err = fmt.Errorf("%w with id %s under %s (it went away)", ErrNoSession, id, transcript.ProjectsDir(configDir))
	}
	return s, err
}

// Current finds the session of a working directory: the newest main
// transcript (by modification time) in its project folder. The folder is
// named after the directory as given, or, when there is none, after the
// directory with its symlinks resolved (as Claude Code names it).
func Current(configDir, cwd string) (*Session, error) {
	dirs := []string{cwd}
	if real, err := filepath.EvalSymlinks(cwd); err == nil && real != cwd {
		dirs = append(dirs, real)
	}
	var looked string
	for _, d := range dirs {
		name := transcript.ProjectDirName(d)
		p := Project{Folder: name, Dir: filepath.Join(transcript.ProjectsDir(configDir), name)}
		looked = p.Dir
		entries, err := os.ReadDir(p.Dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		newest, newestAt := "", int64(0)
		for _, e := range entries {
			if !e.Type().IsRegular() || !transcript.IsSessionFileName(e.Name()) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if t := fi.ModTime().UnixNano(); newest == "" || t > newestAt {
				newest, newestAt = e.Name(), t
			}
		}
		if newest == "" {
			return nil, fmt.Errorf("%w for %s (no *.jsonl in %s)", ErrNoSession, cwd, p.Dir)
		}
		if fi, err := os.Lstat(p.Dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			p.Linked = true
		}
		s, err := ScanSession(p, strings.TrimSuffix(newest, ".jsonl"))
		if err == nil && s == nil {
			err = fmt.Errorf("%w for %s (%s went away)", ErrNoSession, cwd, newest)
		}
		return s, err
	}
	return nil, fmt.Errorf("%w for %s (looked in %s)", ErrNoSession, cwd, looked)
}
