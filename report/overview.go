package report

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/sessions/usage"
	"ccm/transcript"
)

// OverviewOptions configure the page over all sessions.
type OverviewOptions struct {
	ClaudeDir   string
	StoreRoot   string
	ArchiveRoot string
	Jobs        int
	Now         time.Time
	// Top is how many of the largest sessions are listed and checked.
	Top int
	// Select narrows the page to some sessions (--project, --older-than,
	// --min-size); the zero Selector is every session.
	Select sessions.Selector
}

type AllSessions struct {
	helpers
	Dir        string
	Total      string
	Sessions   int
	Store      string
	Archives   string
	Missing    []string
	Projects   []projectView
	MaxProject int64
	Rows       []rowView
	RowsNote   string
}

type projectView struct {
	Name  string
	Total int64
	Cells []int64 // transcripts, subagents, tool results, backups, archives, other
}

type rowView struct {
	Project, ID, Label, Age string
	ShortID                 string // the id's first 8 characters; the whole id is its title
	Bytes, AgeSeconds       int64
	Context                 int64
	Checked                 bool
	Errors                  int
	CheckErr                string
	CheckRank               int // sorts: errors first, then unchecked, then clean
}

// Overview measures a config dir for the page: disk per project (as
// ccm du) and the largest sessions (as ccm sessions), each of the top
// ones checked as ccm check does. Problems reading parts of it become
// notes on the page.
func Overview(ctx context.Context, o OverviewOptions) (*AllSessions, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	v := &AllSessions{Dir: o.ClaudeDir}
	if _, err := os.Stat(transcript.ProjectsDir(o.ClaudeDir)); err != nil {
		v.Missing = append(v.Missing, fmt.Sprintf("no projects folder under %s: Claude Code has written no session here", o.ClaudeDir))
	}
	rep, err := usage.Measure(ctx, o.ClaudeDir, usage.Options{StoreRoot: o.StoreRoot, ArchiveRoot: o.ArchiveRoot, Jobs: o.Jobs})
	if err != nil {
		return nil, err
	}
	v.Total = ui.Bytes(rep.Total)
	v.Store = ui.Bytes(rep.Global[usage.Store])
	v.Archives = ui.Bytes(rep.Totals[usage.Archives])
	for _, e := range rep.Errors {
		v.Missing = append(v.Missing, e)
	}
	for _, r := range rep.Projects {
		if o.Select.Project != "" && !sessions.MatchProject(o.Select.Project, r.Project, r.Folder) {
			continue
		}
		b := r.Bytes
		other := b[usage.OtherProject] + b[usage.FileHistory] + b[usage.Todos] + b[usage.Debug]
		v.Projects = append(v.Projects, projectView{Name: r.Project, Total: r.Total,
			Cells: []int64{b[usage.Transcripts], b[usage.Subagents], b[usage.ToolResults], b[usage.Backups], b[usage.Archives], other}})
		v.MaxProject = max(v.MaxProject, r.Total)
	}
	sel := o.Select
	sel.All = sel.All || !sel.Given()
	picked, err := sessions.Select(ctx, o.ClaudeDir, sel, sessions.SelectOptions{Now: o.Now, Sessions: true, Jobs: o.Jobs})
	if err != nil {
		return nil, err
	}
	rows, errs := sessions.Rows(ctx, o.ClaudeDir, picked, sessions.Options{Jobs: o.Jobs, Now: o.Now})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, e := range errs {
		v.Missing = append(v.Missing, e.Error())
	}
	v.Sessions = len(rows)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].TotalBytes > rows[j].TotalBytes })
	top := min(len(rows), max(0, o.Top))
	for _, r := range rows[:top] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rv := rowView{Project: r.Project, ID: r.ID, ShortID: shortID(r.ID), Label: r.Label(), Bytes: r.TotalBytes, Context: r.Context}
		age := o.Now.Sub(r.ModTime)
		rv.AgeSeconds, rv.Age = int64(age.Seconds()), ui.Age(age)
		rv.Errors, rv.CheckErr = checkFile(r.Path)
		rv.Checked = rv.CheckErr == ""
		switch {
		case rv.CheckErr != "" || rv.Errors > 0:
			rv.CheckRank = 0
		default:
			rv.CheckRank = 2
		}
		v.Rows = append(v.Rows, rv)
	}
	v.RowsNote = fmt.Sprintf("The %d largest of %d sessions by size (transcript, subagents, tool results and backups), each read in full by ccm check; context is the last recorded usage. Click a heading to sort.", top, len(rows))
	return v, nil
}

// checkFile counts what would break a resume of one transcript.
func checkFile(path string) (errs int, failure string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "unreadable"
	}
	defer f.Close()
	ix, err := transcript.Build(f, transcript.BuildOptions{})
	if err != nil {
		return 0, "not a transcript"
	}
	for _, x := range transcript.Check(ix, transcript.CheckOptions{Subagent: transcript.IsSubagentPath(path)}) {
		if x.Severity == transcript.Error {
			errs++
		}
	}
	return errs, ""
}

// SetOverview puts the overview on the page.
func (p *Page) SetOverview(v *AllSessions) { p.Overview = v }

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
