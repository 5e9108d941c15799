package bundle

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
	"ccm/transcript"
)

// Root is a project's working directory as its records name it, on any
// operating system: a POSIX path (/Users/me/proj) or a Windows one
// (C:\Users\me\proj, \\server\share\proj).
type Root string

// Windows reports whether the root is a Windows path (a drive letter or a
// UNC share): its separator is '\'.
func (r Root) Windows() bool {
	s := string(r)
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') && isLetter(s[0]) || strings.HasPrefix(s, `\\`)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (r Root) sep() string {
	if r.Windows() {
		return `\`
	}
	return "/"
}

// Mapping moves a session from one project root to another, and maybe to
// another session id.
type Mapping struct {
	OldRoot, NewRoot Root
	OldID, NewID     string
}

// Path maps p when it is the old root or under it ("" and false when
// not): the rest keeps its parts, joined with the new root's separator.
func (m *Mapping) Path(p string) (string, bool) {
	old := string(m.OldRoot)
	if old == "" || m.OldRoot == m.NewRoot {
		return "", false
	}
	if p == old {
		return string(m.NewRoot), true
	}
	seps := "/"
	if m.OldRoot.Windows() {
		seps = `\/`
	}
	base := strings.TrimRight(old, seps)
	if len(p) <= len(base) || !strings.HasPrefix(p, base) || !strings.ContainsRune(seps, rune(p[len(base)])) {
		return "", false
	}
	rest := strings.TrimLeft(p[len(base):], seps)
	parts := strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(seps, r) })
	return strings.TrimRight(string(m.NewRoot), m.NewRoot.sep()) + m.NewRoot.sep() + strings.Join(parts, m.NewRoot.sep()), true
}

// locationFields are the record fields the client locates a session's
// project by, beyond each record's cwd: a relocation's new cwd (the
// client's own record when a session moves, read from the tail), and a
// worktree session's original cwd and worktree path. The conversation
// (messages, tool inputs and results) is never changed.
var locationFields = map[string][]string{
	"relocated":      {"relocatedCwd"},
	"worktree-state": {"worktreeSession.originalCwd", "worktreeSession.worktreePath"},
}

// Line rewrites one JSONL record for the mapping: its cwd (and the
// location fields of its type) when under the old root, its sessionId
// when it is the old id and the id changes. Each changed value is spliced
// in at its offset, written as the client writes strings; every other
// byte of the line stays as it was. A line that is not a JSON object is
// returned as it is (a line that does not end in '}', a torn last record,
// is checked whole; the others, every record Claude Code wrote whole, are
// not parsed beyond the members sought).
func (m *Mapping) Line(line []byte) (out []byte, located, ided bool, err error) {
	edits, located, ided := m.Edits(line)
	if len(edits) == 0 {
		return line, false, false, nil
	}
	return rawjson.Splice(make([]byte, 0, len(line)+64), line, edits), located, ided, nil
}

// Edits are Line's changes to line, in the order of their offsets.
func (m *Mapping) Edits(line []byte) (edits []rawjson.Edit, located, ided bool) {
	body := bytes.TrimRight(line, "\r\n")
	if len(body) == 0 || body[0] != '{' || body[len(body)-1] != '}' && !gjson.ValidBytes(body) {
		return nil, false, false
	}
	edit := func(v gjson.Result, s string) {
		edits = append(edits, rawjson.ReplaceValue(v, rawjson.Append(nil, s)))
	}
	for _, v := range locations(body) {
		if np, ok := m.Path(v.Str); ok {
			edit(v, np)
			located = true
		}
	}
	if m.NewID != "" && m.NewID != m.OldID {
		if v := gjson.GetBytes(body, "sessionId"); v.Type == gjson.String && v.Str == m.OldID && v.Index > 0 {
			edit(v, m.NewID)
			ided = true
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Off < edits[j].Off })
	return edits, located, ided
}

// locations are the string values of a record (body, without its line
// end) that locate its project: its cwd and the location fields of its
// type.
func locations(body []byte) []gjson.Result {
	fields := []string{"cwd"}
	// The client's own location records, found by their fields' names
	// before anything is parsed (most lines have neither).
	if bytes.Contains(body, []byte(`"relocatedCwd"`)) || bytes.Contains(body, []byte(`"worktreeSession"`)) {
		if t := gjson.GetBytes(body, "type"); t.Type == gjson.String {
			fields = append(fields, locationFields[t.Str]...)
		}
	}
	var out []gjson.Result
	for _, f := range fields {
		if v := gjson.GetBytes(body, f); v.Type == gjson.String && v.Index > 0 {
			out = append(out, v)
		}
	}
	return out
}

// CheckRoot is a new project root given on the command line: made
// absolute from the working directory, it must be a directory that
// exists; symbolic links are resolved, as the client's working directory
// is the physical path. It returns the path the client will see.
func CheckRoot(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("--cwd: empty path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("--cwd %s: %v", p, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("--cwd %s: no such directory (create it, or check it out there, first: the session's project lives in it)", abs)
		}
		return "", fmt.Errorf("--cwd %s: %v", abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("--cwd %s: %v", abs, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--cwd %s: not a directory", abs)
	}
	return real, nil
}

// FindRoot finds a session's project root: hint when the client would
// name the folder after it, else the first cwd in the transcript that it
// would, else the first cwd at all ("" when the records name none).
func FindRoot(folder, transcriptPath, hint string) (string, error) {
	if hint != "" && transcript.EncodeProjectDir(hint) == folder {
		return hint, nil
	}
	f, err := os.Open(transcriptPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	first := ""
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: its cwd is near its start, in the envelope.
			line = line[:min(len(line), 64<<10)]
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
		}
		if i := bytes.Index(line, []byte(`"cwd":"`)); i >= 0 {
			if c := gjson.GetBytes(line, "cwd"); c.Type == gjson.String && c.Str != "" {
				if transcript.EncodeProjectDir(c.Str) == folder {
					return c.Str, nil
				}
				if first == "" {
					first = c.Str
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if first == "" {
		return hint, nil
	}
	return first, nil
}

// Rename maps a member's path to its place for a new folder and id.
func Rename(p, oldFolder, newFolder, oldID, newID string) string {
	proj := "projects/" + oldFolder + "/"
	switch {
	case strings.HasPrefix(p, proj):
		rest := p[len(proj):]
		if rest == oldID || rest == oldID+".jsonl" || strings.HasPrefix(rest, oldID+"/") || strings.HasPrefix(rest, oldID+".jsonl.backup.") {
			rest = newID + rest[len(oldID):]
		}
		return "projects/" + newFolder + "/" + rest
	case p == "file-history/"+oldID || strings.HasPrefix(p, "file-history/"+oldID+"/"):
		return "file-history/" + newID + p[len("file-history/"+oldID):]
	case strings.HasPrefix(p, "todos/"):
		return "todos/" + strings.ReplaceAll(p[len("todos/"):], oldID, newID)
	case p == "debug/"+oldID+".txt":
		return "debug/" + newID + ".txt"
	}
	return p
}

// IsTranscript reports whether a member holds JSONL records (a transcript,
// a subagent's, a backup, a legacy agent file).
func IsTranscript(p string) bool {
	return strings.HasPrefix(p, "projects/") && (strings.HasSuffix(p, ".jsonl") || strings.Contains(filepath.Base(p), ".jsonl.backup."))
}
