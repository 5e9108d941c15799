package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"sync"
	"time"

	"ccm/internal/ui"
)

//go:embed page.html
var pageSource string

// page is parsed once; html/template escapes every value by its context
// (text, attribute, URL, script), so nothing a transcript holds can end
// an element or run as script.
// page is parsed on first use, not in every process that links the
// package: `ccm hook` would pay 0.3 ms for it on every tool call.
var page = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageSource)) })

// Page is what one HTML file shows: an overview of every session, one or
// more sessions, or both.
type Page struct {
	Title     string
	Version   string
	Generated string
	ClaudeDir string
	Overview  *AllSessions
	Sessions  []*sessionView
}

// NewPage starts a page.
func NewPage(title, version, claudeDir string, now time.Time) *Page {
	return &Page{Title: title, Version: version, ClaudeDir: claudeDir, Generated: now.UTC().Format("2006-01-02 15:04 UTC")}
}

// Render writes the page.
func (p *Page) Render(w io.Writer) error { return page().Execute(w, p) }

// Figures returns the sessions on the page, for --json.
func (p *Page) Figures() []*Session {
	out := []*Session{}
	for _, v := range p.Sessions {
		out = append(out, v.S)
	}
	return out
}

// AddSession adds a session's section.
func (p *Page) AddSession(s *Session) {
	v := &sessionView{S: s, Chart: buildChart(s), PointsID: fmt.Sprintf("points-%d", len(p.Sessions)+1)}
	v.Growth = topGrowth(s.Turns, 10)
	for _, c := range s.Tools {
		v.ToolMax = max(v.ToolMax, c.Output)
	}
	for _, c := range s.Commands {
		v.CommandMax = max(v.CommandMax, c.Output)
	}
	const maxFindings = 50
	for i, f := range s.Findings {
		if i == maxFindings {
			v.MoreFindings = len(s.Findings) - maxFindings
			break
		}
		v.Findings = append(v.Findings, findingView{Line: f.Line, IsError: f.Severity == 1, Text: f.Text})
	}
	c := s.Analysis.Categories
	for _, x := range []struct {
		name string
		n    int64
	}{
		{"thinking (with signatures)", c.Thinking}, {"tool_result content", c.ToolResult},
		{"toolUseResult copies", c.ToolUseResult}, {"tool_use inputs", c.ToolUseInput}, {"images", c.Image},
		{"progress records", c.Progress}, {"file-history-snapshots", c.FileHistory}, {"the rest", c.Rest},
	} {
		v.Categories = append(v.Categories, category{Name: x.name, Bytes: x.n, Pct: pct(x.n, s.Bytes)})
	}
	p.Sessions = append(p.Sessions, v)
}

// helpers are the formatting functions both views offer the template.
type helpers struct{}

// Bytes writes a byte count.
func (helpers) Bytes(n any) string { return ui.Bytes(toInt64(n)) }

// Tokens writes a token count with thousands separators.
func (helpers) Tokens(n int64) string { return ui.Count(n) }

// Time writes a record time, or "-".
func (helpers) Time(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("01-02 15:04:05")
}

// Bar draws a bar of n against whole.
func (helpers) Bar(n, whole any) template.HTML {
	a, b := toInt64(n), toInt64(whole)
	if a <= 0 || b <= 0 {
		return ""
	}
	w := max(1, int(float64(a)*120/float64(b)))
	return template.HTML(`<span class="bar" style="width:` + strconv.Itoa(min(w, 120)) + `px"></span>`)
}

func toInt64(n any) int64 {
	switch v := n.(type) {
	case int:
		return int64(v)
	case int64:
		return v
	}
	return 0
}

type sessionView struct {
	helpers
	S            *Session
	Chart        *chart
	PointsID     string
	Growth       []growth
	ToolMax      int64
	CommandMax   int64
	Findings     []findingView
	MoreFindings int
	Categories   []category
}

type findingView struct {
	Line    int
	IsError bool
	Text    string
}

type category struct {
	Name  string
	Bytes int64
	Pct   string
}

// Chart layout values the template needs.
func (v *sessionView) PlotRight() int  { return padL + plotW }
func (v *sessionView) PlotBottom() int { return padT + plotH }
func (v *sessionView) TickY() int      { return padT + plotH + 15 }
func (v *sessionView) AxisY() int      { return padT + plotH + 29 }

// Size is the transcript's size.
func (v *sessionView) Size() string { return ui.Bytes(v.S.Bytes) }

// Window is the model's context window.
func (v *sessionView) Window() string { return ui.Count(v.S.Window) }

// LastContext is the context of the last request.
func (v *sessionView) LastContext() string {
	if n := len(v.S.Turns); n > 0 {
		return ui.Count(v.S.Turns[n-1].Context())
	}
	return "none recorded"
}

// LastPct is the last context as a share of the window.
func (v *sessionView) LastPct() string {
	if n := len(v.S.Turns); n > 0 && v.S.Window > 0 {
		return pct(v.S.Turns[n-1].Context(), v.S.Window)
	}
	return ""
}

// PeakContext is the largest context of any request.
func (v *sessionView) PeakContext() string {
	var m int64
	for _, t := range v.S.Turns {
		m = max(m, t.Context())
	}
	if m == 0 {
		return "-"
	}
	return ui.Count(m)
}

// PurgeBytes is the size the purge's dry run would leave.
func (v *sessionView) PurgeBytes() string {
	if v.S.PurgeReport == nil {
		return "-"
	}
	return ui.Bytes(v.S.PurgeReport.BytesAfter)
}

// PurgeTokens is the purge's estimate of the resume context, before → after.
func (v *sessionView) PurgeTokens() string {
	r := v.S.PurgeReport
	if r == nil || r.TokensBefore == nil || r.TokensAfter == nil {
		return ""
	}
	return ui.Count(r.TokensBefore.Tokens) + " → " + ui.Count(r.TokensAfter.Tokens)
}

// Rate says how removed bytes became tokens.
func (v *sessionView) Rate() string {
	if e := v.S.Estimate; e != nil && e.Bytes > 0 {
		return fmt.Sprintf("this session's own rate of %.2f bytes a token (the cl100k estimate of its resume context)", float64(e.Bytes)/float64(max(1, e.Tokens-int64(e.Images)*1600)))
	}
	return "4 bytes a token"
}

func pct(n, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", float64(n)*100/float64(whole))
}
