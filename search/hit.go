package search

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"ccm/internal/textindex"
	"ccm/internal/ui"
	"ccm/search/searchtext"
	"ccm/sessions"
)

// Hit is one message that matches a query.
type Hit struct {
	Time     time.Time `json:"time,omitzero"`
	Project  string    `json:"project"`
	Session  string    `json:"session"`
	Agent    string    `json:"agent,omitempty"` // a subagent's id
	Line     int       `json:"line"`            // the record's line in its transcript
	Role     string    `json:"role"`            // user or assistant
	Kind     string    `json:"kind"`            // prompt, reply, tool input, tool output
	Tool     string    `json:"tool,omitempty"`
	Snippet  string    `json:"snippet"`
	Archived bool      `json:"archived"`
	Machine  string    `json:"machine,omitempty"` // the machine that archived it, for an archive in object storage
	Path     string    `json:"path"`              // the transcript, or the archive (a file, or an s3:// URL)
	Resume   string    `json:"resume"`
	Score    float64   `json:"score,omitempty"`
	// Mark is the match's byte range in Snippet.
	Mark [2]int `json:"-"`
}

var kindNames = map[uint8]string{textindex.KindPrompt: "prompt", textindex.KindReply: "reply",
	textindex.KindInput: "tool input", textindex.KindOutput: "tool output"}

// KindNames are the words --in takes, with their bits.
var KindNames = map[string]uint8{"prompts": textindex.KindPrompt, "replies": textindex.KindReply,
	"tools": textindex.KindInput, "outputs": textindex.KindOutput}

func (ix *Index) hit(c candidate, agent string, q *Query) Hit {
	f := c.f
	h := Hit{Project: f.Project, Session: f.Session, Agent: f.Agent, Line: int(c.doc.Line),
		Tool: ix.cat.toolName(c.doc.Tool), Archived: f.Src == srcArchive, Path: f.Path}
	if agent != "" {
		h.Agent = agent
	}
	if c.doc.Time != 0 {
		h.Time = time.Unix(int64(c.doc.Time), 0).UTC()
	}
	for _, k := range []uint8{textindex.KindPrompt, textindex.KindReply, textindex.KindInput, textindex.KindOutput} {
		if c.doc.Kind&k != 0 {
			h.Kind = kindNames[k]
			break
		}
	}
	h.Role = "user"
	if c.doc.Kind&(textindex.KindReply|textindex.KindInput) != 0 {
		h.Role = "assistant"
	}
	if h.Project == "" {
		h.Project = sessions.DecodeFolderGuess(f.Folder)
	}
	h.Resume = "cd " + ui.ShellQuote(h.Project) + " && claude --resume " + f.Session
	if h.Archived {
		unarchive := q.Unarchive
		if unarchive == "" {
			unarchive = "ccm unarchive"
		}
		h.Resume = unarchive + " " + f.Session + " && " + h.Resume
	}
	if q.Remote != "" {
		h.Machine, _, _ = strings.Cut(strings.TrimPrefix(f.Path, strings.TrimSuffix(q.Remote, "/")+"/"), "/")
	}
	return h
}

// snippetContext is how much text a snippet shows on each side of the
// match, in runes.
const snippetContext = 60

// snippet cuts one line of text around text[s:e], white space runs made
// single spaces, and the match's range in it.
func snippet(text string, s, e int) (string, [2]int) {
	if e-s > 200 {
		e = s + 200
		for e > s && !utf8.RuneStart(text[e]) {
			e--
		}
	}
	ws := s
	for n := 0; ws > 0 && n < snippetContext; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:ws])
		ws -= size
	}
	we := e
	for n := 0; we < len(text) && n < snippetContext; n++ {
		_, size := utf8.DecodeRuneInString(text[we:])
		we += size
	}
	pre, mid, post := oneLine(text[ws:s]), oneLine(text[s:e]), oneLine(text[e:we])
	if ws > 0 {
		pre = "…" + strings.TrimLeft(pre, " ")
	}
	if we < len(text) {
		post = strings.TrimRight(post, " ") + "…"
	}
	return pre + mid + post, [2]int{len(pre), len(pre) + len(mid)}
}

// oneLine makes text one line for a terminal: white space and control
// characters (C0 and C1, which could move the cursor) become one space.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' || r < 0x20 || r >= 0x7f && r < 0xa0 {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// reader reads candidate messages back, keeping a few files open.
type reader struct {
	dir     string
	resolve func(string) ([]byte, error)
	redact  []*regexp.Regexp
	files   map[string]*os.File
	parts   map[string]*part
	buf     []byte
	// broken is called with an archive whose part is missing or damaged.
	broken func(f *fileEntry)
}

func newReader(dir string, resolve func(string) ([]byte, error), redact []*regexp.Regexp) *reader {
	return &reader{dir: dir, resolve: resolve, redact: redact, files: map[string]*os.File{}, parts: map[string]*part{}}
}

const maxOpen = 64

// kept returns the open file of m under key, opening it when it is not
// there; at maxOpen files, those open are closed first.
func kept[T any](m map[string]T, key string, open func() (T, error), close func(T)) (T, error) {
	if v, ok := m[key]; ok {
		return v, nil
	}
	if len(m) >= maxOpen {
		for k, v := range m {
			close(v)
			delete(m, k)
		}
	}
	v, err := open()
	if err == nil {
		m[key] = v
	}
	return v, err
}

func (r *reader) close() {
	for _, f := range r.files {
		f.Close()
	}
	for _, p := range r.parts {
		p.close()
	}
}

// text reads a candidate's text (redacted), and its subagent's id for a
// message of an archived subagent.
func (r *reader) text(c candidate) (string, string, error) {
	if c.f.Src == srcArchive {
		p, err := kept(r.parts, c.f.Part, func() (*part, error) { return openPart(filepath.Join(r.dir, c.f.Part)) }, (*part).close)
		if err != nil {
			r.broken(c.f)
			return "", "", err
		}
		d, err := p.doc(int64(c.doc.Off), c.doc.Len)
		if err != nil {
			r.broken(c.f)
			return "", "", err
		}
		return RedactString(d.Text, r.redact), d.M, nil
	}
	f, err := kept(r.files, c.f.Path, func() (*os.File, error) { return os.Open(c.f.Path) }, func(f *os.File) { f.Close() })
	if err != nil {
		return "", "", err
	}
	if cap(r.buf) < int(c.doc.Len) {
		r.buf = make([]byte, c.doc.Len)
	}
	line := r.buf[:c.doc.Len]
	if _, err := f.ReadAt(line, int64(c.doc.Off)); err != nil {
		return "", "", err
	}
	x := &searchtext.Extractor{Resolve: r.resolve}
	text, _ := x.Text(line)
	return RedactString(text, r.redact), "", nil
}
