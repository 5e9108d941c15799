// Package report gathers what ccm report shows (per-turn context figures
// of a session, what a purge would leave, what takes the disk) and renders
// it as one self-contained HTML page, and draws the terminal sparklines of
// ccm analyze and the size bars of ccm sessions.
//
// Everything is read in one streaming pass per transcript: the collector
// keeps per-turn figures (a few dozen bytes a turn), never records.
package report

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"ccm/transcript"
)

// Turn is one API request of the main conversation: an assistant message
// (one message.id, however many lines it was written as) with the usage
// the API reported for it.
type Turn struct {
	Line  int              `json:"line"` // the message's first line
	Time  time.Time        `json:"time,omitzero"`
	Usage transcript.Usage `json:"usage"`
	Added int64            `json:"added_bytes"` // text and images written since the previous request
	Why   Contribution     `json:"why"`         // the largest single addition among them
	msgID string
}

// Context is the context the request stood for: everything it read
// (input, cache read, cache creation) and what it wrote.
func (t Turn) Context() int64 { return t.Usage.Total() }

// Contribution is one thing that entered the context between two requests.
type Contribution struct {
	Kind   string `json:"kind"`   // tool output, image, prompt, pasted text, thinking, tool input, reply, compact summary
	Detail string `json:"detail"` // the tool and command, when there is one
	Line   int    `json:"line"`
	Bytes  int64  `json:"bytes"`
}

// Consumer is the total one tool or command put into the transcript.
type Consumer struct {
	Name   string `json:"name"`
	Calls  int    `json:"calls"`
	Output int64  `json:"output_bytes"` // tool_result content
	Input  int64  `json:"input_bytes"`  // tool_use input
}

// Marker is a point on the context curve: a compact boundary or a purge.
type Marker struct {
	Turn  int    `json:"turn"` // the number of requests before it
	Line  int    `json:"line,omitempty"`
	Label string `json:"label"`
}

// collector builds the per-turn figures as the lines stream past.
type collector struct {
	turns      []Turn
	pending    []Contribution // additions since the last request, largest first, at most a few
	pendingSum int64
	boundaries []Marker
	models     map[string]int
	tools      map[string]*Consumer
	commands   map[string]*Consumer
	calls      map[string]callInfo // tool_use id → tool and command, until its result
	stubs      int                 // records carrying ccm stubs
	stubKeys   map[string]int64    // the stubs' store keys and the bytes they stand for
	sideTurns  int
	subagent   bool // a subagent's file: its sidechain records are its conversation
}

type callInfo struct{ tool, command string }

func newCollector() *collector {
	return &collector{models: map[string]int{}, tools: map[string]*Consumer{}, commands: map[string]*Consumer{},
		calls: map[string]callInfo{}, stubKeys: map[string]int64{}}
}

var stubMark = []byte("[CCM_CACHED]")

// visit takes one line (a transcript.Visitor).
func (c *collector) visit(l transcript.Line, rec transcript.Record, f *transcript.Facts, sz *transcript.Sizes) error {
	if f == nil {
		return nil
	}
	if bytes.Contains(l.Raw, stubMark) {
		c.stubs++
		c.readStubs(l.Raw)
	}
	if f.IsCompactBoundary() && inConversation(f, c.subagent) {
		c.boundaries = append(c.boundaries, Marker{Turn: len(c.turns), Line: int(f.Line), Label: "compact boundary"})
	}
	if !inConversation(f, c.subagent) {
		if f.Type == transcript.TypeAssistant && f.HasUsage {
			c.sideTurns++
		}
		return nil
	}
	switch f.Type {
	case transcript.TypeAssistant:
		c.assistant(rec, f, sz)
	case transcript.TypeUser:
		c.user(f, sz)
	}
	return nil
}

func (c *collector) assistant(rec transcript.Record, f *transcript.Facts, sz *transcript.Sizes) {
	if f.HasUsage && !f.APIError {
		n := len(c.turns)
		if n == 0 || f.MsgID() == "" || c.turns[n-1].msgID != f.MsgID() {
			t := Turn{Line: int(f.Line), msgID: f.MsgID(), Added: c.pendingSum}
			if len(c.pending) > 0 {
				t.Why = c.pending[0]
			}
			if ts, err := time.Parse(time.RFC3339Nano, rec.Get("timestamp").Str); err == nil {
				t.Time = ts
			}
			if m := rec.Get("message.model").Str; m != "" && m != "<synthetic>" {
				c.models[strings.Clone(m)]++
			}
			c.turns = append(c.turns, t)
			c.pending, c.pendingSum = c.pending[:0], 0
		}
		c.turns[len(c.turns)-1].Usage = f.Usage() // a later line of the message carries the final output count
	}
	var inputs, names int64
	hasBash := false
	for _, b := range f.Blocks() {
		if b.Type != transcript.BlockToolUse {
			continue
		}
		names += int64(len(b.Name))
		c.calls[b.ID] = callInfo{tool: b.Name}
		c.consumer(c.tools, b.Name).Calls++
		if b.Name == "Bash" {
			hasBash = true
		}
	}
	if sz != nil {
		inputs = int64(sz.ToolUseInput)
	}
	if hasBash || inputs > 0 {
		// Walk the blocks once more for the commands and each input's size.
		rec.Content().ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str != "tool_use" {
				return true
			}
			name := b.Get("name").Str
			in := b.Get("input")
			id := b.Get("id").Str
			ci := callInfo{tool: strings.Clone(name)}
			if name == "Bash" {
				ci.command = strings.Clone(CommandKey(in.Get("command").Str)) // the line buffer is reused
				cc := c.consumer(c.commands, ci.command)
				cc.Calls++
				cc.Input += int64(len(in.Raw))
			}
			c.calls[strings.Clone(id)] = ci
			c.consumer(c.tools, ci.tool).Input += int64(len(in.Raw))
			c.add(Contribution{Kind: "tool input", Detail: detail(ci), Line: int(f.Line), Bytes: int64(len(in.Raw))})
			return true
		})
	}
	if f.ThinkingBytes > 0 {
		c.add(Contribution{Kind: "thinking", Line: int(f.Line), Bytes: f.ThinkingBytes})
	}
	if text := f.TextBytes - f.ThinkingBytes - inputs - names; text > 0 {
		c.add(Contribution{Kind: "reply", Line: int(f.Line), Bytes: text})
	}
}

func (c *collector) user(f *transcript.Facts, sz *transcript.Sizes) {
	var results int64
	if sz != nil {
		for _, o := range sz.ToolResults {
			ci, ok := c.calls[o.ToolUseID]
			if !ok {
				ci.tool = "(unknown tool)"
			}
			delete(c.calls, o.ToolUseID)
			c.consumer(c.tools, ci.tool).Output += int64(o.Bytes)
			if ci.command != "" {
				c.consumer(c.commands, ci.command).Output += int64(o.Bytes)
			}
			results += int64(o.Bytes)
			c.add(Contribution{Kind: "tool output", Detail: detail(ci), Line: int(f.Line), Bytes: int64(o.Bytes)})
		}
		if sz.Image > 0 {
			c.add(Contribution{Kind: "image", Line: int(f.Line), Bytes: int64(sz.Image)})
		}
	}
	if results > 0 {
		return // the text of a tool result record is its results
	}
	text := f.TextBytes
	if text <= 0 {
		return
	}
	kind := "prompt"
	switch {
	case f.CompactSummary:
		kind = "compact summary"
	case f.Meta:
		kind = "injected text"
	case text > 4000:
		kind = "pasted text"
	}
	c.add(Contribution{Kind: kind, Line: int(f.Line), Bytes: text})
}

// readStubs notes the key and size of every stub in a raw line. Inside a
// JSON string a stub's line breaks are written \n; the fields are the
// ones stub.Stub writes (key first, bytes after source and desc).
func (c *collector) readStubs(raw []byte) {
	for {
		i := bytes.Index(raw, stubMark)
		if i < 0 {
			return
		}
		raw = raw[i+len(stubMark):]
		end := bytes.Index(raw, []byte("[/CCM_CACHED]"))
		if end < 0 || end > 4096 {
			continue
		}
		body := raw[:end]
		key := stubField(body, `\nkey: `)
		n, err := strconv.ParseInt(string(stubField(body, `\nbytes: `)), 10, 64)
		if len(key) == 0 || err != nil {
			continue
		}
		if _, ok := c.stubKeys[string(key)]; !ok {
			c.stubKeys[string(key)] = n
		}
	}
}

// stubField returns the value after name, up to the next escaped line break.
func stubField(body []byte, name string) []byte {
	i := bytes.Index(body, []byte(name))
	if i < 0 {
		return nil
	}
	v := body[i+len(name):]
	if j := bytes.IndexByte(v, '\\'); j >= 0 {
		v = v[:j]
	}
	return v
}

// add notes an addition to the context since the last request.
func (c *collector) add(x Contribution) {
	c.pendingSum += x.Bytes
	if len(c.pending) == 0 {
		c.pending = append(c.pending, x)
	} else if x.Bytes > c.pending[0].Bytes {
		c.pending[0] = x
	}
}

func (c *collector) consumer(m map[string]*Consumer, name string) *Consumer {
	if name == "" {
		name = "(no name)"
	}
	x := m[name]
	if x == nil {
		x = &Consumer{Name: name}
		m[name] = x
	}
	return x
}

func detail(ci callInfo) string {
	if ci.command != "" {
		return ci.tool + ": " + ci.command
	}
	return ci.tool
}

// CommandKey names a shell command for the consumers table: its program,
// and the subcommand for programs that have them ("go test", "git diff"),
// after any leading "cd DIR &&" and environment assignments.
func CommandKey(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	for {
		rest, ok := strings.CutPrefix(cmd, "cd ")
		if !ok {
			break
		}
		i := strings.Index(rest, "&&")
		if i < 0 {
			break
		}
		cmd = strings.TrimSpace(rest[i+2:])
	}
	words := strings.Fields(cmd)
	for len(words) > 1 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	if len(words) == 0 {
		return "(empty)"
	}
	prog := words[0]
	if i := strings.LastIndexByte(prog, '/'); i >= 0 && i < len(prog)-1 {
		prog = prog[i+1:]
	}
	if len(prog) > 40 {
		prog = prog[:40]
	}
	switch prog {
	case "go", "git", "npm", "npx", "pnpm", "yarn", "cargo", "docker", "kubectl", "gh", "uv", "pip", "make", "bun", "deno", "terraform":
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") && len(words[1]) <= 30 {
			return prog + " " + words[1]
		}
	}
	return prog
}

// topConsumers returns the n largest consumers by output, then input.
func topConsumers(m map[string]*Consumer, n int) []Consumer {
	out := make([]Consumer, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Output+out[i].Input, out[j].Output+out[j].Input
		if a != b {
			return a > b
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
