package transcript

import (
	"bytes"
	"ccm/internal/fsutil"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"

	"github.com/tidwall/gjson"
)

// ConfigDir resolves the Claude Code config directory: an explicit value
// (from --claude-dir or $CLAUDE_CONFIG_DIR) wins, else ~/.claude.
func ConfigDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ".claude"
	}
	return filepath.Join(home, ".claude")
}

// ErrNoConfigDir is a Claude Code config directory that does not exist (or
// is not a directory).
var ErrNoConfigDir = errors.New("config dir does not exist")

// CheckConfigDir reports a config dir that is not an existing directory,
// in the one wording every command and the hooks share. Nothing that ccm
// writes is created in a config dir before this check has passed: a typo
// in --claude-dir or CLAUDE_CONFIG_DIR must fail loudly, not quietly
// create a second config dir.
func CheckConfigDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %s (set --claude-dir or CLAUDE_CONFIG_DIR)", ErrNoConfigDir, dir)
	}
	return fmt.Errorf("config dir %s: %w", dir, err)
}

// ProjectsDir is where Claude Code keeps one folder per project.
func ProjectsDir(configDir string) string {
	return filepath.Join(configDir, "projects")
}

// maxProjectName is the length, in UTF-16 code units, past which Claude
// Code cuts a project folder name and appends a hash.
const maxProjectName = 200

// ProjectDirName encodes an absolute working directory the way Claude Code
// names its project folder. Claude Code works on the path as a JavaScript
// string: every UTF-16 code unit that is not an ASCII letter or digit
// becomes '-' (so "é" is one '-', a character beyond the BMP, a surrogate
// pair, two, an invalid byte one, and a Windows path such as
// C:\Users\me\proj gives C--Users-me-proj). A name longer than 200 code
// units is cut to 200, and '-' and a hash of the whole path are appended:
// the path's 32-bit Java-style string hash (h = 31*h + unit over its
// UTF-16 code units), its absolute value in base 36. A Linux path and a
// Windows path encode the same whichever system ccm runs on.
// $CLAUDE_CODE_PROJECT_DIR_NAME pins the name, but only together with
// $CLAUDE_CONFIG_DIR, as in Claude Code.
func ProjectDirName(cwd string) string {
	if pinned := os.Getenv("CLAUDE_CODE_PROJECT_DIR_NAME"); pinned != "" && os.Getenv("CLAUDE_CONFIG_DIR") != "" {
		return pinned
	}
	return EncodeProjectDir(cwd)
}

// EncodeProjectDir is ProjectDirName without the pinned name: the folder
// Claude Code derives from the path alone.
func EncodeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	b := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = 31*h + int32(u)
		if u < 0x80 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= maxProjectName {
		return string(b)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:maxProjectName]) + "-" + strconv.FormatInt(abs, 36)
}

// ErrNoSession is returned when no session matches a lookup.
var ErrNoSession = errors.New("no session found")

// Session is one main transcript file of a project.
type Session struct {
	ID      string // file name without .jsonl
	Path    string
	Project string // project folder name
	Size    int64
	ModTime int64 // Unix nanoseconds
}

// IsSessionFileName reports whether name is a main session transcript:
// <id>.jsonl, not a legacy flat agent-*.jsonl file, not a backup or temp file.
func IsSessionFileName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, "agent-") && !strings.HasPrefix(name, ".")
}

// ProjectSessions lists the main sessions in one project folder, newest
// modification first.
func ProjectSessions(projectDir string) ([]Session, error) {
	entries, err := os.ReadDir(projectDir)
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, e := range entries {
		if e.IsDir() || !IsSessionFileName(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, Session{
			ID:      strings.TrimSuffix(e.Name(), ".jsonl"),
			Path:    filepath.Join(projectDir, e.Name()),
			Project: filepath.Base(projectDir),
			Size:    fi.Size(),
			ModTime: fi.ModTime().UnixNano(),
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModTime > out[j].ModTime })
	return out, nil
}

// CurrentSession finds the session of a working directory: the newest
// main transcript in its project folder.
func CurrentSession(configDir, cwd string) (Session, error) {
	dir := filepath.Join(ProjectsDir(configDir), ProjectDirName(cwd))
	ss, err := ProjectSessions(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Session{}, fmt.Errorf("%w for %s (looked in %s)", ErrNoSession, cwd, dir)
		}
		return Session{}, err
	}
	if len(ss) == 0 {
		return Session{}, fmt.Errorf("%w for %s (no *.jsonl in %s)", ErrNoSession, cwd, dir)
	}
	return ss[0], nil
}

// FindSession finds a session by id in any project folder.
func FindSession(configDir, id string) (Session, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return Session{}, fmt.Errorf("invalid session id %q", id)
	}
	id = strings.TrimSuffix(id, ".jsonl")
	projects, err := Projects(configDir)
	if err != nil {
		return Session{}, err
	}
	for _, p := range projects {
		path := filepath.Join(ProjectsDir(configDir), p, id+".jsonl")
		fi, err := os.Stat(path)
		if err == nil && fi.Mode().IsRegular() {
			return Session{ID: id, Path: path, Project: p, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, nil
		}
	}
	return Session{}, fmt.Errorf("%w with id %s under %s", ErrNoSession, id, ProjectsDir(configDir))
}

// Projects lists the project folder names under the config dir.
func Projects(configDir string) ([]string, error) {
	entries, err := os.ReadDir(ProjectsDir(configDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// AllSessions lists the main sessions of every project. A project folder
// that cannot be read is returned in failed and the listing carries on;
// err is for the projects folder itself.
func AllSessions(configDir string) (sessions []Session, failed []error, err error) {
	projects, err := Projects(configDir)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range projects {
		ss, err := ProjectSessions(filepath.Join(ProjectsDir(configDir), p))
		if err != nil {
			failed = append(failed, err)
			continue
		}
		sessions = append(sessions, ss...)
	}
	return sessions, failed, nil
}

// SubagentFiles lists the subagent transcripts that belong to a session:
// <session>/subagents/**/agent-*.jsonl (2.1.x) and, for older layouts, the
// flat agent-*.jsonl files beside the sessions in the project folder.
func SubagentFiles(sessionPath string) ([]string, error) {
	var out []string
	dir := strings.TrimSuffix(sessionPath, ".jsonl")
	sub := filepath.Join(dir, "subagents")
	err := filepath.WalkDir(sub, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "agent-") && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, path)
		}
		return nil
	})
	return out, err
}

// IsSubagentPath reports whether a transcript path is a subagent file
// (either layout), whose parents may point into the main session.
func IsSubagentPath(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "agent-") || strings.Contains(filepath.ToSlash(path), "/subagents/")
}

// WalkTranscripts calls fn for every *.jsonl file under root, subagent
// files included, skipping temp files. Backups (*.jsonl.backup.*) do not
// end in .jsonl and are not visited.
func WalkTranscripts(root string, fn func(path string, d fs.DirEntry) error) error {
	return WalkTranscriptsSkipping(root, fn, nil)
}

// WalkTranscriptsSkipping is WalkTranscripts for a batch: a folder under
// root that cannot be read is passed to skip and the walk carries on with
// the rest (with skip nil, it fails the walk).
func WalkTranscriptsSkipping(root string, fn func(path string, d fs.DirEntry) error, skip func(path string, err error)) error {
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
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		return fn(path, d)
	})
}

// SessionCwd returns the working directory that a session transcript
// belongs to: the first "cwd" of its records whose project folder name is
// the folder the transcript is in. Claude Code finds a session to resume
// by the directory it is started in, so that is where `claude --resume`
// must run. It returns "" when no record matches (a file outside a
// project folder, or a folder that was renamed).
func SessionCwd(path string) string {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	folder := filepath.Base(filepath.Dir(path))
	rd := NewReader(f)
	for {
		l, err := rd.Next()
		if err != nil {
			return ""
		}
		if l.Kind != Object || !bytes.Contains(l.Raw, []byte(`"cwd"`)) {
			continue
		}
		if cwd := gjson.GetBytes(l.Body(), "cwd").Str; cwd != "" && ProjectDirName(cwd) == folder {
			return cwd
		}
	}
}
