// Package locate knows where ccm's files are: the transcripts a command
// is given (files, directories walked for *.jsonl, the current session of
// the working directory, a session id), ccm's home, the CCM store and the
// archive. Every command shares these rules; cmd/ccm only wires flags to
// them.
package locate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/ccm"
	"ccm/transcript"
)

// Selection is how a command was told which transcripts to work on.
type Selection struct {
	Args    []string
	Current bool
	Session string
	// Dirs allows directory arguments, walked for *.jsonl: the config
	// dir's projects/ folder or a folder inside it (InsideProjects).
	Dirs bool
	// AnyDir also allows directories elsewhere (--recursive). Without
	// it, walking ~ or another config dir by mistake would rewrite every
	// transcript found there.
	AnyDir bool
	// Skip, when set, is told of each folder under a directory argument
	// that cannot be read, and the walk carries on (a batch reports it
	// and purges the rest); unset, such a folder fails Files.
	Skip func(path string, err error)
}

// RecursiveFlag is the flag that lets a command walk a folder outside the
// config dir's projects/.
const RecursiveFlag = "--recursive"

// File is one transcript to work on.
type File struct {
	Path string
	// Named is true when the user named the file itself (not found by a walk).
	Named bool
}

// UsageError is a selection that is wrong whatever the files hold: the
// command line must change.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// FileError is a file or directory that could not be read.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Files turns a selection into a list of transcripts, failing with a clear
// message when nothing matches.
func Files(claudeDir string, o Selection) ([]File, error) {
	n := 0
	for _, set := range []bool{len(o.Args) > 0, o.Current, o.Session != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, &UsageError{"give files, --current or --session, not several of them"}
	}
	switch {
	case o.Current:
		cwd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		s, err := transcript.CurrentSession(claudeDir, cwd)
		if err != nil {
			return nil, fmt.Errorf("%w\n(hint: pass the transcript path, or --session ID)", err)
		}
		return []File{{Path: s.Path, Named: true}}, nil
	case o.Session != "":
		s, err := transcript.FindSession(claudeDir, o.Session)
		if err != nil {
			return nil, err
		}
		return []File{{Path: s.Path, Named: true}}, nil
	case len(o.Args) == 0:
		return nil, &UsageError{"no transcript given (pass FILE, --current or --session ID)"}
	}
	var out []File
	skipped := 0
	skip := o.Skip
	if skip != nil {
		skip = func(path string, err error) { skipped++; o.Skip(path, err) }
	}
	for _, a := range o.Args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, &FileError{a, err}
		}
		if !fi.IsDir() {
			out = append(out, File{Path: a, Named: true})
			continue
		}
		if !o.Dirs {
			return nil, fmt.Errorf("%s: is a directory (pass a transcript file)", a)
		}
		if !o.AnyDir && !InsideProjects(claudeDir, a) {
			return nil, &UsageError{fmt.Sprintf("%s: not inside %s; ccm walks only the config dir's transcripts (%s walks this folder too)",
				a, transcript.ProjectsDir(claudeDir), RecursiveFlag)}
		}
		var found []string
		root := a
		if li, err := os.Lstat(a); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			// A symlink to a folder is walked as that folder (a trailing
			// separator makes the walk's Lstat follow it).
			root = a + string(filepath.Separator)
		}
		err = transcript.WalkTranscriptsSkipping(root, func(path string, _ fs.DirEntry) error {
			found = append(found, path)
			return nil
		}, skip)
		if err != nil {
			return nil, &FileError{a, err}
		}
		if len(found) == 0 && skipped == 0 {
			return nil, fmt.Errorf("%s: no transcripts (*.jsonl) in this directory", a)
		}
		sort.Strings(found)
		for _, p := range found {
			out = append(out, File{Path: p})
		}
	}
	return out, nil
}

// InsideProjects reports whether dir is the config dir's projects/ folder
// or inside it, once symlinks are resolved. A project folder directly
// under projects/ may itself be a symlink (ccm lists such folders as
// projects); any other symlink counts by where it leads.
func InsideProjects(claudeDir, dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	projects, err := filepath.Abs(transcript.ProjectsDir(claudeDir))
	if err != nil {
		return false
	}
	var roots []string
	if r, err := filepath.EvalSymlinks(projects); err == nil {
		roots = append(roots, r)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(projects, abs); err == nil && rel != "." && !escapes(rel) {
			folder := strings.SplitN(rel, string(filepath.Separator), 2)[0]
			if r, err := filepath.EvalSymlinks(filepath.Join(projects, folder)); err == nil {
				roots = append(roots, r)
			}
		}
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, real); err == nil && !escapes(rel) {
			return true
		}
	}
	return false
}

// escapes reports whether a relative path leads out of its base.
func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

// Home is where ccm keeps its own state: $CCM_HOME, else <claude dir>/ccm.
func Home(claudeDir string) string {
	if h := os.Getenv("CCM_HOME"); h != "" {
		return h
	}
	return filepath.Join(claudeDir, "ccm")
}

// Store is the CCM store's directory: cacheDir when set (--cache-dir,
// $CCM_CACHE_DIR), else <claude dir>/cache/ccm.
func Store(claudeDir, cacheDir string) string {
	if cacheDir != "" {
		return cacheDir
	}
	return ccm.DefaultRoot(claudeDir)
}

// Archive is where ccm archive puts archives: to (--to DIR) when set, else
// configured ($CCM_ARCHIVE_DIR, from the environment or config.env), else
// <home>/archive.
func Archive(home, to, configured string) string {
	if to != "" {
		return to
	}
	if configured != "" {
		return configured
	}
	return filepath.Join(home, "archive")
}
