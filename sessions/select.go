package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"time"

	"ccm/internal/batch"
	"ccm/transcript"
)

// Selector is how a command was told which sessions to work on: the same
// selectors for every command that takes sessions (docs/sessions.md).
// Args, Current, Session and All say what to work on, one of them at a
// time; Project, OlderThan and MinSize narrow it, and alone they narrow
// every session.
type Selector struct {
	Args      []string      // FILE|DIR...
	Current   bool          // the newest session of the working directory
	Session   string        // a session id, or a unique prefix of one
	Project   string        // a project's path or folder name
	All       bool          // every session of every project
	OlderThan time.Duration // only sessions not written for this long
	MinSize   int64         // only sessions at least this large
	// Recursive allows directory arguments outside the config dir's
	// projects/. Without it, walking ~ or another config dir by mistake
	// would work on every transcript found there.
	Recursive bool
}

// RecursiveFlag is the flag that sets Selector.Recursive.
const RecursiveFlag = "--recursive"

// Given reports whether the selector says anything at all.
func (s Selector) Given() bool {
	return len(s.Args) > 0 || s.Current || s.Session != "" || s.All || s.Project != "" || s.OlderThan > 0 || s.MinSize > 0
}

// Target is one transcript a command works on.
type Target struct {
	Path string
	// Named is true when the user named the transcript itself (FILE,
	// --current, --session); one found by walking a folder or listing the
	// sessions is not.
	Named bool
	// Project is the project folder the transcript is in ("" outside the
	// config dir's project folders).
	Project string
	// Session is the session whose main transcript this is, with its
	// files, when the selection was asked for sessions (or needed their
	// size); nil for any other transcript: a subagent transcript found by
	// a walk, a file outside the project folders.
	Session *Session
	// File is the transcript as it was found (its size, modification
	// time and identity).
	File File
	// Size is what --min-size compares: the session's size
	// (Session.Bytes) or, for another transcript, the file's.
	Size int64
}

// SkipReason says why a selected transcript was left out.
type SkipReason int

// Why a transcript was left out: the narrowing selectors.
const (
	NotInProject SkipReason = iota + 1 // --project
	TooRecent                          // --older-than
	TooSmall                           // --min-size
)

// Skipped is a transcript the narrowing selectors left out.
type Skipped struct {
	Target
	Why SkipReason
}

// Failure is a file or folder that could not be looked at. Err is the
// error as the system gave it (it names Path).
type Failure struct {
	Path string
	Err  error
}

// Selection is what a Selector chose.
type Selection struct {
	Selector
	Todo    []Target
	Skipped []Skipped
	// Failed lists what could not be read (a project folder, a folder
	// inside a walked one, a transcript gone meanwhile): a batch reports
	// each and carries on with the rest.
	Failed []Failure
	// whole are the project folders listed in full (by --all, --project,
	// or a folder argument), by path: their legacy agent files of no
	// session are listed too.
	whole map[string]*Folder
}

// Err is the selection's first failure, for a command that does not carry
// on past one; nil when there is none.
func (s *Selection) Err() error {
	if len(s.Failed) == 0 {
		return nil
	}
	f := s.Failed[0]
	return &FileError{Path: f.Path, Err: unwrapPath(f.Path, f.Err)}
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

// ErrNothingGiven is the usage error of a command that needs a selection
// and got none.
const ErrNothingGiven = "no sessions given (pass FILE|DIR..., --current, --session ID, --project P or --all)"

// SelectOptions pace and shape a selection.
type SelectOptions struct {
	Now time.Time
	// Cwd is the working directory for --current ("": the process's).
	Cwd string
	// Sessions makes every target that is a session's main transcript
	// carry its Session, with all its files (a command that works on
	// whole sessions); without it only --all, --project and --min-size
	// list them.
	Sessions bool
	// Jobs is how many project folders are listed at once (0: two per CPU).
	Jobs int
}

// Select turns a selector into the transcripts to work on, by the one
// model of a config dir (ListProjects, ScanFolder): a symlinked project
// folder is a project like the others, and no other symlink is followed
// in a walk.
func Select(ctx context.Context, configDir string, sel Selector, o SelectOptions) (*Selection, error) {
	n := 0
	for _, set := range []bool{len(sel.Args) > 0, sel.Current, sel.Session != "", sel.All} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, &UsageError{"give FILE|DIR..., --current, --session or --all, not several of them"}
	}
	if !sel.Given() {
		return nil, &UsageError{ErrNothingGiven}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	s := &Selection{Selector: sel, whole: map[string]*Folder{}}
	var projects []Project // every project, or those --project names
	if sel.Project != "" || (n == 0 || sel.All) {
		all, err := ListProjects(configDir)
		if err != nil {
			return nil, err
		}
		projects = all
		if sel.Project != "" {
			projects = nil
			for _, p := range all {
				if MatchProject(sel.Project, "", p.Folder) {
					projects = append(projects, p)
				}
			}
			if len(projects) == 0 {
				return nil, fmt.Errorf("no project matches %s under %s (ccm sessions lists the projects)", sel.Project, transcript.ProjectsDir(configDir))
			}
		}
	}
	var err error
	switch {
	case sel.Current:
		cwd := o.Cwd
		if cwd == "" {
			if cwd, err = os.Getwd(); err != nil {
				return nil, err
			}
		}
		ss, err := Current(configDir, cwd)
		if err != nil {
			return nil, fmt.Errorf("%w\n(hint: pass the transcript path, or --session ID)", err)
		}
		s.add(sessionTarget(ss, true), o)
	case sel.Session != "":
		ss, err := Find(configDir, sel.Session, projects)
		if err != nil {
			return nil, err
		}
		s.add(sessionTarget(ss, true), o)
	case len(sel.Args) > 0:
		for _, a := range sel.Args {
			if err := s.arg(ctx, configDir, a, o); err != nil {
				return nil, err
			}
		}
	default:
		if err := s.folders(ctx, projects, o); err != nil {
			return nil, err
		}
	}
	return s, ctx.Err()
}

// sessionTarget is the target of a session's main transcript.
func sessionTarget(ss *Session, named bool) Target {
	return Target{Path: ss.Main.Path, Named: named, Project: ss.Folder, Session: ss, File: ss.Main, Size: ss.Bytes()}
}

// add keeps t, or skips it by the narrowing selectors.
func (s *Selection) add(t Target, o SelectOptions) {
	if why := s.Selector.skip(t, o.Now); why != 0 {
		s.Skipped = append(s.Skipped, Skipped{Target: t, Why: why})
		return
	}
	s.Todo = append(s.Todo, t)
}

// skip says which narrowing selector leaves t out (0: none).
func (sel Selector) skip(t Target, now time.Time) SkipReason {
	switch {
	case sel.Project != "" && (t.Project == "" || !MatchProject(sel.Project, "", t.Project)):
		return NotInProject
	case sel.OlderThan > 0 && now.Sub(t.File.ModTime) < sel.OlderThan:
		return TooRecent
	case sel.MinSize > 0 && t.Size < sel.MinSize:
		return TooSmall
	}
	return 0
}

// folders lists every session of projects, jobs folders at once.
func (s *Selection) folders(ctx context.Context, projects []Project, o SelectOptions) error {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0) * 2 // listing waits on the disk
	}
	scanned := make([]*Folder, len(projects))
	errs := make([]error, len(projects))
	batch.Run(ctx, len(projects), jobs, func(i int) {
		scanned[i], errs[i] = ScanFolder(projects[i])
	}, nil)
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, f := range scanned {
		if errs[i] != nil {
			s.Failed = append(s.Failed, failureOf(projects[i].Dir, errs[i]))
			continue
		}
		s.whole[f.Dir] = f
		for _, e := range f.Errors {
			s.Failed = append(s.Failed, failureOf(f.Dir, e))
		}
		for _, ss := range f.Sessions {
			s.add(sessionTarget(ss, false), o)
		}
	}
	return nil
}

// failureOf names the path of a listing error (a *fs.PathError says it).
func failureOf(dir string, err error) Failure {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Failure{Path: pe.Path, Err: err}
	}
	return Failure{Path: dir, Err: err}
}

func trimJSONL(name string) string { return name[:len(name)-len(".jsonl")] }

// Bytes is the session's size as a listing shows it and --min-size
// compares it: its transcript, the files under its <id>/ folder
// (subagent transcripts, tool results) and its legacy agent files; not
// its purge backups.
func (s *Session) Bytes() int64 {
	n := s.Main.Size
	for _, fs := range [][]File{s.Companion, s.Legacy} {
		for _, f := range fs {
			n += f.Size
		}
	}
	return n
}

// Sessions returns the sessions of the targets to work on, in order.
func (s *Selection) Sessions() []*Session {
	var out []*Session
	for _, t := range s.Todo {
		if t.Session != nil {
			out = append(out, t.Session)
		}
	}
	return out
}

// unwrapPath drops the *fs.PathError around err when it names path, so
// that a FileError does not say the path twice.
func unwrapPath(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Err
	}
	return err
}
