// Package memory is ccm's tool memory: the lessons of failed tool calls,
// kept across sessions so that the model sees, before it calls a tool
// again, how that tool failed before in the same project.
//
// The store is the earlier agentihooks NDJSON file
// (AGENTICORE_TOOL_MEMORY_PATH; its records {"ts","tool","error","input",
// "session"} are read as they are) with ccm's fields added: project, hash
// (SHA-256 of tool, input summary and error, for de-duplication) and
// count. It holds at most Max entries, the oldest dropped first. Every
// change takes an exclusive flock on <path>.lock and either appends one
// line or atomically replaces the file: agentihooks' unlocked read,
// append and rewrite kept only 38-42 of 200 entries under 8 concurrent
// writers and resurrected dropped ones. Readers take no lock: they
// see the file before or after a replace, and skip a torn last line.
package memory

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// Entry is one lesson.
type Entry struct {
	TS      string `json:"ts"` // YYYY-MM-DDTHH:MM:SSZ, as agentihooks wrote
	Tool    string `json:"tool"`
	Error   string `json:"error"`
	Input   string `json:"input"`
	Session string `json:"session,omitempty"`
	Project string `json:"project,omitempty"`
	Hash    string `json:"hash,omitempty"`
	Count   int    `json:"count,omitempty"`
}

// Key returns the entry's de-duplication hash (computed for entries
// agentihooks wrote, which have none).
func (e Entry) Key() string {
	if e.Hash != "" {
		return e.Hash
	}
	return Hash(e.Tool, e.Input, e.Error)
}

// Hash is the content hash of a lesson: 16 hex digits of SHA-256 of the
// tool, the input summary and the error's first line. The first line is
// the error itself; what follows differs by where the failure was seen
// (Claude Code appends advice to an MCP error in the transcript that the
// PostToolUseFailure hook never sees), and must not make two lessons of
// one failure.
func Hash(tool, input, errText string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(errText), "\n")
	sum := sha256.Sum256([]byte(tool + "\x00" + input + "\x00" + strings.TrimSpace(first)))
	return hex.EncodeToString(sum[:8])
}

// Store is the NDJSON file of lessons.
type Store struct {
	Path string
	Max  int           // entries kept; <= 0 means 100
	Wait time.Duration // lock wait; 0 means 3 s
}

func (s *Store) max() int {
	if s.Max <= 0 {
		return 100
	}
	return s.Max
}

func (s *Store) lock(ctx context.Context) (*fsutil.Lock, error) {
	w := s.Wait
	if w <= 0 {
		w = 3 * time.Second
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(s.Path)); err != nil {
		return nil, err
	}
	return fsutil.LockFile(ctx, s.Path+".lock", true, w)
}

// maxFile bounds the lessons file read back; the entries it keeps are a
// few hundred kilobytes.
const maxFile = 64 << 20

// List returns the entries, oldest first. A missing file is empty; lines
// that are not entries (a torn last line) are skipped.
func (s *Store) List() ([]Entry, error) {
	data, err := fsutil.ReadRegular(s.Path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(data), nil
}

func parse(data []byte) []Entry {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e Entry
		if json.Unmarshal(line, &e) != nil || e.Tool == "" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Record adds a lesson. A lesson already stored (same hash) is moved to
// the end with its time and session updated and its count raised, keeping
// its first wording; the store then holds it once. It reports whether the
// lesson was new.
func (s *Store) Record(ctx context.Context, e Entry) (bool, error) {
	e.Hash = e.Key()
	if e.Count == 0 {
		e.Count = 1
	}
	l, err := s.lock(ctx)
	if err != nil {
		return false, err
	}
	defer l.Unlock()
	data, err := fsutil.ReadRegular(s.Path, maxFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	all := parse(data)
	for i, old := range all {
		if old.Key() == e.Hash {
			// Seen again: keep the first wording, note when and how often.
			old.TS, old.Session, old.Hash, old.Count = e.TS, e.Session, e.Hash, max(old.Count, 1)+1
			if old.Project == "" {
				old.Project = e.Project
			}
			all = append(append(all[:i:i], all[i+1:]...), old)
			return false, s.rewrite(all)
		}
	}
	if len(all)+1 > s.max() {
		return true, s.rewrite(append(all, e))
	}
	line, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		line = append([]byte{'\n'}, line...) // end a torn last line first
	}
	f, err := fsutil.OpenPrivate(s.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return false, err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return true, err
}

// rewrite replaces the file with the newest max entries.
func (s *Store) rewrite(all []Entry) error {
	if n := len(all) - s.max(); n > 0 {
		all = all[n:]
	}
	var b bytes.Buffer
	for _, e := range all {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return fsutil.WriteFileVolatile(s.Path, fsutil.FileMode, b.Bytes())
}

// Clear removes every lesson and returns how many there were.
func (s *Store) Clear(ctx context.Context) (int, error) {
	l, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer l.Unlock()
	all, err := s.List()
	if err != nil {
		return 0, err
	}
	if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	return len(all), nil
}

// Lessons returns the newest n lessons of tool in project (lessons
// agentihooks stored have no project and match every project) that are
// not in seen, newest last. It reads the bounded store once, and nothing
// else: its cost does not depend on the transcript.
func (s *Store) Lessons(tool, project string, n int, seen map[string]bool) ([]Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for i := len(all) - 1; i >= 0 && len(out) < n; i-- {
		e := all[i]
		if e.Tool != tool || (e.Project != "" && project != "" && e.Project != project) || seen[e.Key()] {
			continue
		}
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Line renders a lesson as agentihooks did:
// "[YYYY-MM-DD HH:MM] <tool> -- <error> (input: <input>)".
func (e Entry) Line() string {
	ts := strings.Replace(strings.TrimSuffix(e.TS, "Z"), "T", " ", 1)
	if len(ts) > 16 {
		ts = ts[:16]
	}
	s := "[" + ts + "] " + e.Tool + " -- " + strings.ReplaceAll(e.Error, "\n", " / ")
	if e.Input != "" {
		s += " (input: " + e.Input + ")"
	}
	if e.Count > 1 {
		s += " [seen " + itoa(e.Count) + " times]"
	}
	return s
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
