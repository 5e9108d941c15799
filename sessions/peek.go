package sessions

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"unicode"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
	"ccm/internal/rawjson"
)

// Window sizes of a peek. A row of `ccm sessions` needs the project (the
// first record with a cwd), the first prompt (near the head) and the
// title and the last usage (near the tail): reading these two windows
// keeps a listing of thousands of sessions close to the cost of stat.
// The windows start small (most first and last records are short) and
// grow fourfold, reading only the bytes not read yet, while what a row
// needs is not found.
const (
	headWindow = 16 << 10
	tailWindow = 16 << 10
	// maxHead bounds how far the head is read to find a first complete
	// record when the first lines are huge (a pasted image, say).
	maxHead = 1 << 20
	// maxTail bounds how far back the last usage and title are sought.
	maxTail = 1 << 20
)

// peekBuffers hold a head and a tail window each (maxHead+maxTail bytes),
// reused across files: a listing of thousands of sessions would
// otherwise allocate and clear them for every file.
var peekBuffers = sync.Pool{New: func() any { b := make([]byte, maxHead+maxTail); return &b }}

// Peek is what a listing reads from a transcript's head and tail.
type Peek struct {
	Cwd         string `json:"cwd,omitempty"`
	SessionID   string `json:"session_id,omitempty"` // sessionId of the records
	FirstPrompt string `json:"first_prompt,omitempty"`
	Title       string `json:"title,omitempty"`
	// Context is the context size at the last recorded usage (input,
	// cache reads and writes, output), 0 when no usage was found.
	Context int64 `json:"context_tokens"`
	// Records counts the lines holding a record. Exact when the whole
	// file was read (RecordsEstimated false), else the file's size
	// divided by the mean line length seen in the head and the tail.
	Records          int64 `json:"records"`
	RecordsEstimated bool  `json:"records_estimated,omitempty"`
	// Empty is a file with no record at all (0 bytes, or only blank lines).
	Empty bool `json:"empty,omitempty"`
}

// PeekFile reads the head and tail of a transcript of the given size.
// Memory is bounded by maxHead+maxTail, whatever the file's size.
func PeekFile(path string, size int64) (Peek, error) {
	var p Peek
	f, err := fsutil.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return p.own(), err
	}
	defer f.Close()
	bp := peekBuffers.Get().(*[]byte)
	defer peekBuffers.Put(bp)
	if size <= headWindow+tailWindow {
		buf := (*bp)[:size]
		n, err := io.ReadFull(f, buf)
		if err != nil && err != io.ErrUnexpectedEOF {
			return p.own(), err
		}
		buf = buf[:n]
		lines := splitLines(buf, true, true)
		p.fromHead(lines)
		p.fromTail(lines)
		p.Records = int64(len(lines))
		p.Empty = len(lines) == 0
		return p.own(), nil
	}
	// Head: grow until a complete record with a cwd and a prompt is seen,
	// or maxHead; each round reads only the new bytes.
	headBuf := (*bp)[:maxHead]
	var head []string
	var headLen, have int
	for want := headWindow; ; want *= 4 {
		want = min(want, maxHead, int(size))
		prev := have
		n, err := f.ReadAt(headBuf[prev:want], int64(prev))
		if err != nil && err != io.EOF {
			return p.own(), err
		}
		have = prev + n
		short := have < want // the file shrank since it was listed
		buf := headBuf[:have]
		head = splitLines(buf, true, false)
		headLen = lastNL(buf)
		p = Peek{}
		p.fromHead(head)
		if (p.Cwd != "" && p.FirstPrompt != "") || want >= maxHead || want >= int(size) || short {
			break
		}
	}
	// Tail: the window's bytes sit at the end of tailBuf, the file's last
	// byte at its last byte, and grow backwards.
	tailBuf := (*bp)[maxHead:]
	var tail []string
	var tailLen int
	have = 0
	for want := tailWindow; ; want *= 4 {
		want = min(want, maxTail, int(size))
		n, err := f.ReadAt(tailBuf[maxTail-want:maxTail-have], size-int64(want))
		if err != nil && err != io.EOF {
			return p.own(), err
		}
		if n < want-have {
			break // the file shrank: keep what the head found
		}
		have = want
		buf := tailBuf[maxTail-have:]
		tail = splitLines(buf, false, true)
		tailLen = len(buf) - bytes.IndexByte(buf, '\n') - 1
		t := p.Title
		p.Context, p.Title = 0, ""
		p.fromTail(tail)
		if p.Title == "" {
			p.Title = t
		}
		if p.Context > 0 || want >= maxTail || want >= int(size) {
			break
		}
	}
	// Estimate the record count from the mean line length of both windows.
	if n := len(head) + len(tail); n > 0 && headLen+tailLen > 0 {
		p.Records = int64(float64(size) * float64(n) / float64(headLen+tailLen))
		p.RecordsEstimated = true
	}
	return p.own(), nil
}

// own copies the strings a peek found out of the window buffer they
// point into, which the next PeekFile reuses.
func (p Peek) own() Peek {
	p.Cwd, p.SessionID = strings.Clone(p.Cwd), strings.Clone(p.SessionID)
	p.FirstPrompt, p.Title = strings.Clone(p.FirstPrompt), strings.Clone(p.Title)
	return p
}

func lastNL(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 }

// splitLines returns the non-blank lines of buf that hold a JSON object.
// A window that does not start at the file's start drops its first
// (partial) line; one that does not end at the file's end drops its last.
func splitLines(buf []byte, atStart, atEnd bool) []string {
	if !atStart {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil
		}
		buf = buf[i+1:]
	}
	if !atEnd {
		buf = buf[:lastNL(buf)]
	}
	var out []string
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		var line []byte
		if i < 0 {
			line, buf = buf, nil
		} else {
			line, buf = buf[:i], buf[i+1:]
		}
		line = bytes.TrimSpace(bytes.Trim(line, "\x00"))
		if len(line) > 0 && line[0] == '{' {
			// A view, not a copy: PeekFile clones what it keeps before
			// the buffer is reused.
			out = append(out, rawjson.String(line))
		}
	}
	return out
}

// fromHead takes the project's cwd, the session id and the first real
// prompt from the first records.
func (p *Peek) fromHead(lines []string) {
	for _, l := range lines {
		if p.Cwd == "" {
			if c := gjson.Get(l, "cwd"); c.Type == gjson.String {
				p.Cwd = c.Str
			}
		}
		if p.SessionID == "" {
			if s := gjson.Get(l, "sessionId"); s.Type == gjson.String {
				p.SessionID = s.Str
			}
		}
		if p.FirstPrompt == "" {
			p.FirstPrompt = promptOf(l)
		}
		if p.Title == "" && strings.Contains(l, `"summary"`) && gjson.Get(l, "type").Str == "summary" {
			p.Title = oneLine(gjson.Get(l, "summary").Str, 200) // older versions put it first
		}
		if p.Cwd != "" && p.FirstPrompt != "" && p.SessionID != "" {
			return
		}
	}
}

// promptOf returns the text a user typed, for a user record that is a
// prompt (not a tool result, not a meta or command record).
func promptOf(l string) string {
	r := gjson.GetMany(l, "type", "isMeta", "message.content", "isSidechain")
	if r[0].Str != "user" || r[1].Bool() {
		return ""
	}
	var text string
	c := r[2]
	switch {
	case c.Type == gjson.String:
		text = c.Str
	case c.IsArray():
		for _, b := range c.Array() {
			if b.Get("type").Str == "text" {
				text = b.Get("text").Str
				break
			}
		}
	}
	text = strings.TrimSpace(text)
	if text == "" || strings.HasPrefix(text, "<") || strings.HasPrefix(text, "Caveat:") || strings.HasPrefix(text, "[Request interrupted") {
		return "" // command wrappers, system reminders, local-command output
	}
	return oneLine(text, 200)
}

// fromTail takes the title (the last custom-title, else ai-title, else
// summary) and the context at the last usage, reading backwards.
func (p *Peek) fromTail(lines []string) {
	var custom, ai, summary string
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.Contains(l, `"type"`) {
			continue
		}
		switch gjson.Get(l, "type").Str {
		case "custom-title":
			if custom == "" {
				custom = gjson.Get(l, "customTitle").Str
			}
		case "ai-title":
			if ai == "" {
				ai = gjson.Get(l, "aiTitle").Str
			}
		case "summary":
			if summary == "" {
				summary = gjson.Get(l, "summary").Str
			}
		case "assistant":
			if p.Context == 0 && !gjson.Get(l, "isApiErrorMessage").Bool() {
				u := gjson.Get(l, "message.usage")
				if u.Exists() {
					p.Context = u.Get("input_tokens").Int() + u.Get("cache_read_input_tokens").Int() +
						u.Get("cache_creation_input_tokens").Int() + u.Get("output_tokens").Int()
				}
			}
		}
	}
	for _, t := range []string{custom, ai, summary, p.Title} {
		if t != "" {
			p.Title = oneLine(t, 200)
			return
		}
	}
}

// oneLine folds whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	// strings.Fields and Join would walk a pasted 100 KB prompt whole;
	// this stops after n+1 runes, with the same result.
	out := make([]rune, 0, min(len(s), n+1))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > n {
			break
		}
	}
	if len(out) > n {
		return string(out[:n-1]) + "…"
	}
	return string(out)
}
