package sessions

import (
	"context"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// LiveWindow is how recently a session may have been written to and still
// count as live (as for ccm purge): Claude Code is probably running it.
const LiveWindow = 2 * time.Minute

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

// Options select and pace a scan.
type Options struct {
	Project string // a project path, folder name, or a substring of either; "" for all
	Jobs    int
	Now     time.Time
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

// Liveness tells live sessions: written within LiveWindow, or held open
// for writing by another process (read from /proc once per scan).
type Liveness struct {
	now     time.Time
	writers map[fsutil.FileID][]int
}

// NewLiveness reads /proc once for files under configDir held open for
// writing.
func NewLiveness(configDir string, now time.Time) *Liveness {
	w, _ := fsutil.OpenForWriting(configDir)
	return &Liveness{now: now, writers: w}
}

// Live reports whether f is live and why ("" when not).
func (l *Liveness) Live(f File) string {
	if age := l.now.Sub(f.ModTime); age < LiveWindow && age > -LiveWindow {
		return "written in the last 2 minutes"
	}
	if pids := l.writers[f.ID]; len(pids) > 0 {
		return "open for writing by another process"
	}
	return ""
}

// LiveAny reports the first live file of a session (transcript, companion
// and legacy files).
func (l *Liveness) LiveAny(s *Session) string {
	if r := l.Live(s.Main); r != "" {
		return r
	}
	for _, fs := range [][]File{s.Companion, s.Legacy} {
		for _, f := range fs {
			if r := l.Live(f); r != "" {
				return r + " (" + filepath.Base(f.Path) + ")"
			}
		}
	}
	return ""
}

// Scan lists every session of the config dir, one row each, with jobs
// project folders read at once. Per-folder errors become rows' Error or
// are returned in errs; the scan carries on.
func Scan(ctx context.Context, configDir string, o Options) (rows []*Row, errs []error, err error) {
	projects, err := ListProjects(configDir)
	if err != nil {
		return nil, nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0) * 2 // reading heads waits on the disk
	}
	ret := ReadRetention(configDir)
	live := NewLiveness(configDir, o.Now)
	var mu sync.Mutex
	done := 0
	work := make(chan Project)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				rs, e := scanProject(p, o, ret, live)
				mu.Lock()
				errs = append(errs, e...)
				for _, r := range rs {
					if o.Project == "" || MatchProject(o.Project, r.Project, r.Folder) {
						rows = append(rows, r)
					}
				}
				done++
				if o.Progress != nil {
					o.Progress(done, len(projects))
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range projects {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, errs, ctx.Err()
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ModTime.After(rows[j].ModTime) })
	return rows, errs, nil
}

// MatchProject reports whether a --project value names a project: its real
// path, its folder name, or the folder name of the value read as a path.
func MatchProject(want, project, folder string) bool {
	if want == project || want == folder {
		return true
	}
	if abs, err := filepath.Abs(want); err == nil && (abs == project || transcript.ProjectDirName(abs) == folder) {
		return true
	}
	return false
}

func scanProject(p Project, o Options, ret Retention, live *Liveness) ([]*Row, []error) {
	f, err := ScanFolder(p)
	if err != nil {
		return nil, []error{err}
	}
	var rows []*Row
	byID := map[string]*Row{}
	for _, s := range f.Sessions {
		r := rowOf(s, o, ret, live)
		rows = append(rows, r)
		byID[s.ID] = r
	}
	// Flat agent files of older versions join their session (by the
	// sessionId of their records); an agent file whose session is gone
	// is its own row.
	for _, a := range f.Agents {
		var pk Peek
		if !o.NoPeek {
			pk, _ = PeekFile(a.Path, a.Size)
		}
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
		s := &Session{ID: strings.TrimSuffix(filepath.Base(a.Path), ".jsonl"), Folder: p.Folder, Dir: p.Dir, Main: a}
		rows = append(rows, rowOf(s, o, ret, live))
	}
	return rows, f.Errors
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
