package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"ccm/internal/rawjson"
	"ccm/search/searchtext"
	"ccm/sessions"
	"ccm/transcript"
)

// PageMessage is one message of a page of a session.
type PageMessage struct {
	Line      int       `json:"line"`
	Time      time.Time `json:"time,omitzero"`
	Kind      string    `json:"kind"`
	Tool      string    `json:"tool,omitempty"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated,omitempty"` // the text was cut at maxPageText
}

// Page is a run of a session's messages from a line on.
type Page struct {
	Session  string        `json:"session"`
	Agent    string        `json:"agent,omitempty"`
	Project  string        `json:"project"`
	Archived bool          `json:"archived"`
	Messages []PageMessage `json:"messages"`
	// Next is the line to ask for the following page; 0 at the end.
	Next int `json:"next,omitempty"`
}

// Bounds of a page: the text of one message, and of the whole page.
const (
	maxPageText  = 8000
	maxPageBytes = 64000
)

// ReadPage reads up to count messages of a session (its main transcript,
// or subagent agent's) from line from on, live or archived. session may be
// a unique prefix of the id.
func (ix *Index) ReadPage(ctx context.Context, session, agent string, from, count int, resolve func(string) ([]byte, error), redact []*regexp.Regexp) (*Page, error) {
	f, err := ix.findFile(session, agent)
	if err != nil {
		return nil, err
	}
	from, count = max(from, 1), max(count, 1)
	pg := &Page{Session: f.Session, Agent: f.Agent, Project: f.Project, Archived: f.Src == srcArchive}
	size := 0
	add := func(m PageMessage) bool {
		if len(pg.Messages) >= count || size > maxPageBytes {
			pg.Next = m.Line
			return false
		}
		m.Text = RedactString(m.Text, redact)
		if len(m.Text) > maxPageText {
			cut := maxPageText
			for cut > 0 && !isRuneStart(m.Text[cut]) {
				cut--
			}
			m.Text, m.Truncated = m.Text[:cut], true
		}
		size += len(m.Text)
		pg.Messages = append(pg.Messages, m)
		return true
	}
	if f.Src == srcArchive {
		p, err := openPart(filepath.Join(ix.dir, f.Part))
		if err != nil {
			ix.markBroken(f)
			return nil, fmt.Errorf("%s: %w", f.Path, errStalePart)
		}
		defer p.close()
		var msgs []PageMessage
		err = p.each(func(_ int64, _ uint32, l partLine) error {
			if l.agent != agent || int(l.line) < from {
				return nil
			}
			m := PageMessage{Line: int(l.line), Kind: kindName(l.kind), Tool: strings.Clone(l.tool),
				Text: string(searchtext.AppendUnescaped(nil, l.text))}
			if l.time > 0 {
				m.Time = time.Unix(l.time, 0).UTC()
			}
			msgs = append(msgs, m)
			if len(msgs) > count+1 {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			ix.markBroken(f)
			return nil, fmt.Errorf("%s: %w", f.Path, errStalePart)
		}
		sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].Line < msgs[j].Line })
		for _, m := range msgs {
			if !add(m) {
				break
			}
		}
		pg.Agent = agent
		return pg, nil
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	r := transcript.NewReader(file)
	r.Classify = false
	x := &searchtext.Extractor{Resolve: resolve}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		body := l.Body()
		if len(body) == 0 || body[0] != '{' {
			continue
		}
		if l.Num < from {
			// Earlier lines only teach the extractor their tool names.
			if isToolUse(body) {
				x.Line(body, func(uint8, []byte, bool) {})
			}
			continue
		}
		text, rec := x.Text(body)
		if rec.Kind == 0 {
			continue
		}
		m := PageMessage{Line: l.Num, Time: rec.Time, Kind: kindName(rec.Kind), Tool: rec.Tool, Text: text}
		if !m.Time.IsZero() {
			m.Time = m.Time.UTC()
		}
		if !add(m) {
			break
		}
	}
	return pg, nil
}

var errStop = errors.New("stop")

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func isToolUse(body []byte) bool {
	return strings.Contains(rawjson.String(body), `"tool_use"`)
}

func kindName(k uint8) string {
	for _, bit := range []uint8{1, 2, 4, 8} {
		if k&bit != 0 {
			return kindNames[bit]
		}
	}
	return ""
}

// SessionID is the indexed session whose id is id, or whose id starts
// with it (MinPrefix characters or more, as every command takes ids):
// sessions.ErrNoSession when none, a *sessions.AmbiguousError when several.
func (ix *Index) SessionID(id string) (string, error) { return ix.sessionID(id, "") }

// sessionID is SessionID among the files a query over remote sees.
func (ix *Index) sessionID(id, remote string) (string, error) {
	id, err := sessions.CheckID(strings.ToLower(strings.TrimSpace(id)))
	if err != nil {
		return "", err
	}
	var matches []sessions.Match
	seen := map[string]bool{}
	for _, f := range ix.cat.Files {
		if f.Agent == "" && f.Session != "" && !seen[f.Session] && strings.HasPrefix(f.Session, id) && visible(f, remote) {
			seen[f.Session] = true
			matches = append(matches, sessions.Match{ID: f.Session, Folder: f.Folder, Path: f.Path})
		}
	}
	m, ok, err := sessions.MatchID(id, matches)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("%w with id %s in the index", sessions.ErrNoSession, id)
	}
	return m.ID, nil
}

// findFile finds the indexed file of a session id (or unique prefix) and
// agent ("" for the main transcript).
func (ix *Index) findFile(session, agent string) (*fileEntry, error) {
	id, err := ix.SessionID(session)
	if err != nil {
		return nil, err
	}
	var found []*fileEntry
	for _, f := range ix.cat.Files {
		if f.Session == id && f.Agent == agent && visible(f, "") {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%w: session %s has no subagent %q", sessions.ErrNoSession, id, agent)
	}
	// A live session and its archive both indexed: the live one.
	sort.Slice(found, func(i, j int) bool { return found[i].Src == srcLive && found[j].Src != srcLive })
	return found[0], nil
}
