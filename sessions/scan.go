package sessions

import (
	"context"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"ccm/internal/batch"
	"ccm/transcript"
)

// Row is one session in a listing.
type Row struct {
	Project          string    `json:"project"` // the real path, from the records' cwd
	Folder           string    `json:"folder"`  // the encoded project folder
	ID               string    `json:"session"`
	Path             string    `json:"path"`
	Title            string    `json:"title,omitempty"`
	Prompt           string    `json:"first_prompt,omitempty"`
	Size             int64     `json:"bytes"` // main transcript
	Subagents        int       `json:"subagents"`
	SubagentBytes    int64     `json:"subagent_bytes"`
	ToolResultBytes  int64     `json:"tool_result_bytes"`
	TotalBytes       int64     `json:"total_bytes"` // transcript, companion folder, legacy agent files, backups
	Records          int64     `json:"records"`
	RecordsEstimated bool      `json:"records_estimated,omitempty"`
	ModTime          time.Time `json:"last_modified"`
	Context          int64     `json:"context_tokens"`
	Backups          int       `json:"backups"`
	BackupBytes      int64     `json:"backup_bytes"`
	Live             bool      `json:"live"`
	LiveReason       string    `json:"live_reason,omitempty"`
	Archived         bool      `json:"archived"`
	Archive          string    `json:"archive,omitempty"`
	Machine          string    `json:"machine,omitempty"` // an archive in object storage: the machine that wrote it
	SweepAt          time.Time `json:"swept_at,omitzero"` // when Claude Code's sweep deletes it
	Empty            bool      `json:"empty,omitempty"`
	Error            string    `json:"error,omitempty"`

	Session *Session `json:"-"`
}

// SessionBytes is the session without its purge backups: the transcript,
// its subagent transcripts, tool results and legacy agent files.
func (r *Row) SessionBytes() int64 { return r.TotalBytes - r.BackupBytes }

// Title or first prompt, for a listing.
func (r *Row) Label() string {
	if r.Title != "" {
		return r.Title
	}
	return r.Prompt
}

// Options pace a listing.
type Options struct {
	Jobs int
	Now  time.Time
	// Progress, if set, is called once per project folder done.
	Progress func(done, total int)
	// NoPeek skips reading the transcripts (du needs sizes only).
	NoPeek bool
	// Counts, if set, makes the record count of a transcript too large
	// to read whole in a peek exact, from the counts kept between
	// listings (only new bytes are read); without it the count is
	// estimated from the head and the tail.
	Counts *Counts
}

// Scan lists every session of the config dir, one row each: Select with
// --all, then Rows. Folders and transcripts that could not be read are
// returned in errs (or as rows' Error); the scan carries on.
func Scan(ctx context.Context, configDir string, o Options) (rows []*Row, errs []error, err error) {
	sel, err := Select(ctx, configDir, Selector{All: true}, SelectOptions{Now: o.Now, Sessions: true, Jobs: o.Jobs})
	if err != nil {
		return nil, nil, err
	}
	rows, errs = Rows(ctx, configDir, sel, o)
	return rows, errs, ctx.Err()
}

// Rows reads the listing row of every session a selection holds, newest
// first, with jobs project folders read at once. Legacy flat agent files
// (older layouts) join their session, by the sessionId of their records;
// in a folder listed whole, one whose session is gone is a row of its
// own. What could not be read is returned in errs (the selection's
// failures first) or as a row's Error.
func Rows(ctx context.Context, configDir string, sel *Selection, o Options) (rows []*Row, errs []error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0) * 2 // reading heads waits on the disk
	}
	for _, f := range sel.Failed {
		errs = append(errs, f.Err)
	}
	ret := ReadRetention(configDir)
	live := NewLiveness(configDir, o.Now)
	// One job per project folder: the sessions selected in it.
	type group struct {
		dir      string
		sessions []*Session
	}
	var groups []*group
	at := map[string]*group{}
	for _, t := range sel.Todo {
		if t.Session == nil {
			continue
		}
		g := at[t.Session.Dir]
		if g == nil {
			g = &group{dir: t.Session.Dir}
			at[g.dir] = g
			groups = append(groups, g)
		}
		g.sessions = append(g.sessions, t.Session)
	}
	for dir := range sel.whole {
		if at[dir] == nil {
			g := &group{dir: dir}
			at[dir] = g
			groups = append(groups, g)
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].dir < groups[j].dir })
	var mu sync.Mutex
	done := 0
	// Each folder's rows go in its own slot, joined in the folders' order,
	// so that sessions written at the same time keep one order from run
	// to run (the sort below is stable).
	per := make([][]*Row, len(groups))
	batch.Run(ctx, len(groups), jobs, func(i int) {
		g := groups[i]
		per[i] = folderRows(g.sessions, sel.whole[g.dir], sel, o, ret, live)
		mu.Lock()
		defer mu.Unlock()
		done++
		if o.Progress != nil {
			o.Progress(done, len(groups))
		}
	}, nil)
	for _, rs := range per {
		rows = append(rows, rs...)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ModTime.After(rows[j].ModTime) })
	return rows, errs
}

// MatchProject reports whether a --project value names a project: its real
// path, its folder name, or the folder name of the value read as a path
// (as given, or with its symlinks resolved, as Claude Code names it).
func MatchProject(want, project, folder string) bool {
	if want == project || want == folder {
		return true
	}
	abs, err := filepath.Abs(want)
	if err != nil {
		return false
	}
	if abs == project || transcript.ProjectDirName(abs) == folder {
		return true
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return real == project || transcript.ProjectDirName(real) == folder
	}
	return false
}

// folderRows makes the rows of the sessions of one project folder, and
// attaches its legacy agent files (whole: the folder's full listing, nil
// when only some of its sessions were selected).
func folderRows(ss []*Session, whole *Folder, sel *Selection, o Options, ret Retention, live *Liveness) []*Row {
	var rows []*Row
	byID := map[string]*Row{}
	for _, s := range ss {
		r := rowOf(s, o, ret, live)
		rows = append(rows, r)
		byID[s.ID] = r
	}
	if whole == nil || o.NoPeek {
		return rows
	}
	present := map[string]bool{}
	for _, s := range whole.Sessions {
		present[s.ID] = true
	}
	for _, a := range whole.Agents {
		pk, _ := PeekFile(a.Path, a.Size)
		if r := byID[pk.SessionID]; r != nil && pk.SessionID != "" {
			r.Session.Legacy = append(r.Session.Legacy, a)
			r.Subagents++
			r.SubagentBytes += a.Size
			r.TotalBytes += a.Size
			if reason := live.Live(a); reason != "" && !r.Live {
				r.Live, r.LiveReason = true, reason
			}
			continue
		}
		if pk.SessionID != "" && present[pk.SessionID] {
			continue // its session is there, not selected
		}
		// An agent file whose session is gone is its own row, when the
		// narrowing selectors keep it.
		s := &Session{ID: trimJSONL(filepath.Base(a.Path)), Folder: whole.Folder, Dir: whole.Dir, Main: a}
		if sel.Selector.skip(sessionTarget(s, false), o.Now) == 0 {
			rows = append(rows, rowOf(s, o, ret, live))
		}
	}
	return rows
}

func rowOf(s *Session, o Options, ret Retention, live *Liveness) *Row {
	r := &Row{Folder: s.Folder, ID: s.ID, Path: s.Main.Path, Size: s.Main.Size, ModTime: s.Main.ModTime, Session: s}
	r.TotalBytes = s.Main.Size
	for _, c := range s.Companion {
		rel, _ := filepath.Rel(s.CompanionDir(), c.Path)
		switch {
		case IsSubagent(rel):
			r.Subagents++
			r.SubagentBytes += c.Size
		case IsToolResult(rel):
			r.ToolResultBytes += c.Size
		}
		r.TotalBytes += c.Size
	}
	for _, b := range s.Backups {
		r.Backups++
		r.BackupBytes += b.Size
		r.TotalBytes += b.Size
	}
	if reason := live.LiveAny(s); reason != "" {
		r.Live, r.LiveReason = true, reason
	}
	r.SweepAt = ret.SweepAt(s.Main.ModTime)
	r.Project = DecodeFolderGuess(s.Folder)
	if !o.NoPeek {
		pk, err := PeekFile(s.Main.Path, s.Main.Size)
		if err != nil {
			r.Error = err.Error()
		}
		if pk.Cwd != "" {
			r.Project = pk.Cwd
		}
		r.Title, r.Prompt, r.Context = pk.Title, pk.FirstPrompt, pk.Context
		r.Records, r.RecordsEstimated, r.Empty = pk.Records, pk.RecordsEstimated, pk.Empty
		if r.RecordsEstimated && o.Counts != nil {
			if n, err := o.Counts.Lines(s.Main.Path, s.Main); err == nil {
				r.Records, r.RecordsEstimated = n, false
			}
		}
	}
	return r
}

// DecodeFolderGuess turns an encoded folder name back into a path for
// display when no record names the cwd. The encoding is lossy ('-' stood
// for any non-alphanumeric character), so this is a guess.
func DecodeFolderGuess(folder string) string {
	return strings.ReplaceAll(folder, "-", "/")
}
