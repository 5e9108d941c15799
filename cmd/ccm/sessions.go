package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/internal/ui"
	"ccm/report"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/transcript"
)

type sessionsOptions struct {
	globalOptions
	Select   sessions.Selector
	Sort     string // size, age, tokens
	Archived bool
	Jobs     int
	To       string
	From     string // with Archived: s3://BUCKET/PREFIX
	Endpoint string
	Now      time.Time
	ASCII    bool // draw the size bars in plain ASCII
}

func newSessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list every session of every project: size, records, context, age, backups, live, sweep date",
		Description: `One row per session: the project (the real path, from the records' cwd),
the session id, its size (transcript, subagent transcripts and tool results),
records, last modified, context at the last recorded usage, its purge backups
(how many, and their size apart), state (live: written in the last 2 minutes or open for
writing), and when Claude Code's retention sweep (cleanupPeriodDays, from the
settings files; default 30) will delete it; then the title or first prompt.
Only the head and tail of each transcript are read for the row; the record
count is exact: a transcript over 32 KB is counted whole once and then only
the bytes appended since (<ccm home>/cache/line-counts.json). A count that
could not be made is estimated and marked ~.

A header and a size bar beside each size on a terminal (--ascii: '#' bars);
tab-separated columns without a header when piped: project, session, size,
records, modified, context, backups, backup bytes, state, swept at, title.
--archived lists archived sessions from their manifests, without unpacking;
with --from s3://BUCKET/PREFIX, every machine's archives in object storage
(selected by --session, --project, --all, --older-than and --min-size).
Without a selector every session is listed.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.StringFlag{Name: "sort", Value: "age", Usage: "order: size, age (newest first) or tokens"},
			&cli.BoolFlag{Name: "archived", Usage: "list archived sessions instead"},
			&cli.StringFlag{Name: "to", Usage: "with --archived: the archive folder (default <ccm home>/archive)"},
			&cli.StringFlag{Name: "from", Usage: "with --archived: the archives in object storage, `s3://BUCKET/PREFIX`"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			jobsFlag("project folders read at once", "2 per CPU"),
			&cli.BoolFlag{Name: "ascii", Usage: "draw the size bars in plain ASCII"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, true)
			if err != nil {
				return err
			}
			o := sessionsOptions{globalOptions: globals(cmd), Select: sel, Sort: cmd.String("sort"),
				Archived: cmd.Bool("archived"), Jobs: int(cmd.Int("jobs")), To: cmd.String("to"), ASCII: cmd.Bool("ascii"),
				From: cmd.String("from"), Endpoint: cmd.String("endpoint")}
			return runSessions(ctx, o)
		},
	}
}

func runSessions(ctx context.Context, o sessionsOptions) error {
	if o.ASCII {
		o.globalOptions.ASCII = true // the table's shortening as well as the bars
	}
	switch o.Sort {
	case "size", "age", "tokens":
	default:
		return usagef("--sort: %q is not size, age or tokens", o.Sort)
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	var rows []*sessions.Row
	var errs []error
	if o.From != "" && !o.Archived {
		return usagef("--from goes with --archived")
	}
	if o.Archived && (len(o.Select.Args) > 0 || o.Select.Current) {
		return usagef("--archived lists archives: select them by --session, --project, --all, --older-than or --min-size")
	}
	if o.From != "" {
		var err error
		if rows, err = remoteArchivedRows(ctx, o.globalOptions, o.From, o.Endpoint, o.Select, o.Now); err != nil {
			return err
		}
	} else if o.Archived {
		var err error
		rows, errs, err = archivedRows(o.globalOptions, archiveRoot(o.globalOptions, o.To), o.Select, o.Now)
		if err != nil {
			return err
		}
	} else {
		sel, err := selectSessions(ctx, o.globalOptions, o.Select, sessions.SelectOptions{Now: o.Now, Sessions: true, Jobs: o.Jobs})
		if err != nil {
			return err
		}
		for _, t := range sel.Todo {
			if t.Session == nil && t.Named {
				return usagef("%s: not a session of %s (ccm sessions lists sessions)", t.Path, transcript.ProjectsDir(o.ClaudeDir))
			}
		}
		counts := sessions.LoadCounts(filepath.Join(ccmHome(o.globalOptions), "cache", "line-counts.json"))
		rows, errs = sessions.Rows(ctx, o.ClaudeDir, sel, sessions.Options{Jobs: o.Jobs, Now: o.Now, Counts: counts})
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := counts.Save(); err != nil {
			fmt.Fprintf(o.Stderr, "ccm: warning: the record counts were not kept for the next listing: %v\n", err)
		}
	}
	sortRows(rows, o.Sort)
	failed := newItemErrors(o.globalOptions)
	failed.addAll(errs)
	if o.JSON {
		ret := sessions.ReadRetention(o.ClaudeDir)
		if rows == nil {
			rows = []*sessions.Row{}
		}
		if err := writeJSON(o.Stdout, map[string]any{"retention": ret, "sessions": rows, "errors": failed.strings()}); err != nil {
			return err
		}
	} else if err := printSessions(o, rows); err != nil {
		return err
	}
	return failed.status()
}

func errStrings(errs []error) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func sortRows(rows []*sessions.Row, by string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch by {
		case "size":
			return a.SessionBytes() > b.SessionBytes()
		case "tokens":
			return a.Context > b.Context
		}
		return a.ModTime.After(b.ModTime)
	})
}

// archivedRows lists archives as rows, from their sidecar manifests:
// those sel chooses (--session, --project, --all and the narrowing
// selectors; FILE|DIR and --current, which name sessions in place, are
// refused before).
func archivedRows(g globalOptions, root string, sel sessions.Selector, now time.Time) ([]*sessions.Row, []error, error) {
	list, err := archive.List(root)
	if err != nil {
		return nil, nil, err
	}
	list, missing, err := archive.Select(list, nil, sel, now)
	if err != nil {
		return nil, nil, sessionIDError(err)
	}
	if len(missing) > 0 {
		return nil, nil, usagef("no archive of session %s under %s (ccm sessions --archived lists them)", missing[0], root)
	}
	var rows []*sessions.Row
	var errs []error
	for _, l := range list {
		if l.Err != nil {
			errs = append(errs, l.Err)
			continue
		}
		rows = append(rows, archivedRow(l.Manifest, l.Path))
	}
	_ = g
	return rows, errs, nil
}

// archivedRow is an archived session's row, from its manifest; where is
// the archive (a path, or an s3:// URL).
func archivedRow(m *archive.Manifest, where string) *sessions.Row {
	r := &sessions.Row{Project: m.Project, Folder: m.Folder, ID: m.Session, Path: where, Title: m.Title, Prompt: m.Prompt,
		Records: m.Records, Context: m.Context, ModTime: m.LastModified, Archived: true, Archive: where, TotalBytes: m.Bytes}
	for _, f := range m.Files {
		switch {
		case f.Path == m.Transcript():
			r.Size = f.Size
		case strings.Contains(f.Path, ".jsonl.backup."):
			r.Backups++
			r.BackupBytes += f.Size
		case strings.Contains(f.Path, "/subagents/") || strings.Contains(f.Path, "/agent-"):
			r.Subagents++
			r.SubagentBytes += f.Size
		case strings.Contains(f.Path, "/tool-results/"):
			r.ToolResultBytes += f.Size
		}
	}
	return r
}

func printSessions(o sessionsOptions, rows []*sessions.Row) error {
	if !o.Terminal {
		// Plain columns for scripts: exact numbers, RFC 3339 times, tabs.
		for _, r := range rows {
			sweep := ""
			if !r.SweepAt.IsZero() && !r.Archived {
				sweep = r.SweepAt.UTC().Format(time.RFC3339)
			}
			recs := strconv.FormatInt(r.Records, 10)
			if r.RecordsEstimated {
				recs = "~" + recs
			}
			if _, err := fmt.Fprintf(o.Stdout, "%s\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Project, r.ID, r.SessionBytes(), recs,
				r.ModTime.UTC().Format(time.RFC3339), r.Context, r.Backups, r.BackupBytes, state(r), sweep, r.Label()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := writeTable(o.globalOptions, sessionsTable(o, rows)); err != nil {
		return err
	}
	if !o.Archived {
		ret := sessions.ReadRetention(o.ClaudeDir)
		note := fmt.Sprintf("Claude Code deletes sessions not written for %g days (cleanupPeriodDays, %s)", ret.Days, ret.Source)
		if ret.Paused != "" {
			note = "Claude Code's sweep is paused: " + ret.Paused
		}
		fmt.Fprintf(o.Stdout, "%d sessions; %s\n", len(rows), note)
	}
	return nil
}

// The columns of the sessions table, and the order in which a narrow
// terminal drops them: the size bar, the records, the sweep, the backups,
// the context. The project and the title are shortened in the middle
// first, down to their Min.
const (
	colProject = iota
	colSession
	colSize
	colBar
	colRecords
	colModified
	colContext
	colBackups
	colState
	colSweep
	colTitle
)

var sessionCols = []ui.Col{
	colProject: {Name: "PROJECT", Shrink: true, Min: 16}, colSession: {Name: "SESSION"}, colSize: {Name: "SIZE", Right: true},
	colBar: {}, colRecords: {Name: "RECORDS", Right: true}, colModified: {Name: "MODIFIED"}, colContext: {Name: "CONTEXT", Right: true},
	colBackups: {Name: "BACKUPS"}, colState: {Name: "STATE"}, colSweep: {Name: "SWEPT IN"},
	colTitle: {Name: "TITLE / FIRST PROMPT", Shrink: true, Min: 12},
}

// sessionsTable lays out the rows for a terminal, fitted to its width:
// ids of 8 characters (the prefix every command takes), the project and
// title shortened in the middle, the least needed columns dropped when
// that is not enough. --wide prints them whole.
func sessionsTable(o sessionsOptions, rows []*sessions.Row) *ui.Table {
	// A size bar beside each size, against the largest session listed.
	var largest int64
	for _, r := range rows {
		largest = max(largest, r.SessionBytes())
	}
	ascii := o.globalOptions.ASCII
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		sweep := "-"
		switch {
		case r.Archived:
		case r.SweepAt.IsZero():
			sweep = "paused"
		case r.SweepAt.Before(o.Now):
			sweep = "due"
		default:
			sweep = ui.Age(r.SweepAt.Sub(o.Now))
		}
		recs := ui.Count(r.Records)
		if r.RecordsEstimated {
			recs = "~" + recs
		}
		ctx := "-"
		if r.Context > 0 {
			ctx = ui.Count(r.Context)
		}
		backups := "-"
		if r.Backups > 0 {
			backups = fmt.Sprintf("%d, %s", r.Backups, ui.Bytes(r.BackupBytes))
		}
		title := r.Label()
		if !o.Wide {
			title = cut(title, 200) // a first prompt can be pages long
		}
		row := make([]string, len(sessionCols))
		row[colProject], row[colSession], row[colSize] = shortHome(r.Project), shortID(o.globalOptions, r.ID), ui.Bytes(r.SessionBytes())
		row[colBar], row[colRecords] = report.Bar(r.SessionBytes(), largest, sessionBarWidth, ascii), recs
		row[colModified], row[colContext], row[colBackups] = r.ModTime.Local().Format("2006-01-02 15:04"), ctx, backups
		row[colState], row[colSweep], row[colTitle] = state(r), sweep, title
		cells = append(cells, row)
	}
	return fittedTable(o.globalOptions, sessionCols, cells, colBar, colRecords, colSweep, colBackups, colContext)
}

// sessionBarWidth is the width of the size bars, in characters.
const sessionBarWidth = 10

func state(r *sessions.Row) string {
	switch {
	case r.Archived && r.Machine != "":
		return "archived@" + r.Machine
	case r.Archived:
		return "archived"
	case r.Live:
		return "live"
	case r.Error != "":
		return "error"
	case r.Empty:
		return "empty"
	}
	return "-"
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func shortHome(p string) string {
	if h, err := os.UserHomeDir(); err == nil && h != "" && strings.HasPrefix(p, h+"/") {
		return "~" + p[len(h):]
	}
	return p
}

// maintainConfig is the configuration of the batch commands: the process
// environment over <ccm home>/config.env over the defaults.
func maintainConfig(g globalOptions) *hooklib.Config {
	return hooklib.LoadConfig(g.ClaudeDir, os.LookupEnv)
}
