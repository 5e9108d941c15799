package main

import (
	"ccm/fsutil"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"ccm/transcript"
)

// inputOptions select transcripts: explicit files and directories, the
// current session of the working directory, or a session id.
type inputOptions struct {
	Args    []string
	Current bool
	Session string
	// Dirs allows directory arguments, walked for *.jsonl.
	Dirs bool
}

// inputFile is one transcript to work on.
type inputFile struct {
	Path string
	// Named is true when the user named the file itself (not found by a walk).
	Named bool
}

// resolveInputs turns the selection into a list of files, failing with a
// clear message when nothing matches.
func resolveInputs(g globalOptions, o inputOptions) ([]inputFile, error) {
	n := 0
	for _, set := range []bool{len(o.Args) > 0, o.Current, o.Session != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, usagef("give files, --current or --session, not several of them")
	}
	switch {
	case o.Current:
		cwd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		s, err := transcript.CurrentSession(g.ClaudeDir, cwd)
		if err != nil {
			return nil, fmt.Errorf("%w\n(hint: pass the transcript path, or --session ID)", err)
		}
		return []inputFile{{Path: s.Path, Named: true}}, nil
	case o.Session != "":
		s, err := transcript.FindSession(g.ClaudeDir, o.Session)
		if err != nil {
			return nil, err
		}
		return []inputFile{{Path: s.Path, Named: true}}, nil
	case len(o.Args) == 0:
		return nil, usagef("no transcript given (pass FILE, --current or --session ID)")
	}
	var out []inputFile
	for _, a := range o.Args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fileError(a, err)
		}
		if !fi.IsDir() {
			out = append(out, inputFile{Path: a, Named: true})
			continue
		}
		if !o.Dirs {
			return nil, fmt.Errorf("%s: is a directory (pass a transcript file)", a)
		}
		var found []string
		err = transcript.WalkTranscripts(a, func(path string, _ fs.DirEntry) error {
			found = append(found, path)
			return nil
		})
		if err != nil {
			return nil, fileError(a, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no transcripts (*.jsonl) in this directory", a)
		}
		sort.Strings(found)
		for _, p := range found {
			out = append(out, inputFile{Path: p})
		}
	}
	return out, nil
}

// fileError words an error about a file without Go's "stat"/"open" prefix
// noise but with the path and the cause.
func fileError(path string, err error) error {
	// Only an error that is itself about the file is reworded; a wrapped
	// one keeps the context that says what failed (such as the store being
	// full, or its directory missing).
	pe, ok := err.(*fs.PathError)
	if !ok || pe.Path != path {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case errors.Is(pe.Err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file or directory", path)
	case errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	return fmt.Errorf("%s: %w", path, pe.Err)
}

// indexFile opens and indexes one transcript.
func indexFile(path string, opt transcript.BuildOptions) (*transcript.Index, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileError(path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s: %w", path, errEmptyFile)
	}
	ix, err := transcript.Build(f, opt)
	if err != nil {
		return nil, fileError(path, err)
	}
	return ix, nil
}

// errEmptyFile is returned for a 0-byte transcript.
var errEmptyFile = errors.New("empty file (0 bytes), nothing to read")

// absPath returns an absolute path for display and for stored metadata.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
