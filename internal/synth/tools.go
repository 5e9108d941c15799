package synth

import (
	"math/rand/v2"
	"strconv"
)

// This file chooses tool calls and renders their tool_use blocks. The mix
// and output sizes mirror the 210 MB file the earlier tools were measured on
// (docs/earlier-tools.md, "Reference figures"): Bash
// 30, Read 30, Grep 10, Edit 8, Glob 5, TodoWrite 5, Write 3, WebFetch 3,
// Task 3, MCP 3; outputs 55 % 100–2000 B, 25 % 2–5 KB, 15 % 5–50 KB, 4.5 %
// 50–300 KB, 0.5 % 0.3–2 MB. Each call has its own seed, so the text that
// appears both in a tool_use input and in the later result (Write content,
// Edit strings, todos, Task prompt) is regenerated identically instead of
// being kept in memory between the two records.

const (
	toolBash = iota
	toolRead
	toolGrep
	toolEdit
	toolGlob
	toolTodo
	toolWrite
	toolFetch
	toolTask
	toolMCP
)

var toolNames = [...]string{"Bash", "Read", "Grep", "Edit", "Glob", "TodoWrite", "Write", "WebFetch", "Task",
	"mcp__github__search_code"}

var toolWeights = [...]int{30, 30, 10, 8, 5, 5, 3, 3, 3, 3}

var commands = [...]string{"go test ./...", "git status --short", "go build ./... 2>&1", "ls -la internal",
	"git log --oneline -20", "make lint", "go vet ./...", "grep -rn TODO .", "cat go.mod", "git diff --stat",
	"npm run build", "docker ps -a"}

// call is one planned tool call.
type call struct {
	tool    int
	id      string
	use     uid // uuid of the tool_use line
	useLine int // its line number
	size    int // output size in bytes
	seed    uint64
	arg     int  // picks paths and commands
	isErr   bool // Bash exits non-zero
	image   bool // Read of a PNG
	agentID string
	omitUse bool   // orphan-tool-result: the tool_use line is not written
	typed   string // parallel-fork: user text written after the tool_result block
}

// planCall fills c for call i of a round planned by p.
func (g *gen) planCall(c *call, p roundPlan, i int) {
	x := g.r.IntN(100)
	for t, w := range toolWeights {
		if x < w {
			c.tool = t
			break
		}
		x -= w
	}
	if g.side && c.tool == toolTask {
		c.tool = toolRead // no nested agents
	}
	if p.task && i == 0 {
		c.tool = toolTask
	}
	if p.imageTool && i == len2(p) {
		c.tool, c.image = toolRead, true
	}
	c.id = newID(g.r, "toolu_01", 22)
	c.size = outputSize(g.r)
	c.seed = g.r.Uint64()
	c.arg = g.r.IntN(1 << 20)
	c.isErr = c.tool == toolBash && g.r.IntN(25) == 0
	if c.tool == toolTask {
		c.agentID = "a" + strconv.FormatUint(g.r.Uint64()&0xffffff, 16)
	}
}

// len2 is the index of the call that becomes the image Read: the second call
// when the round is a Task round, else the first.
func len2(p roundPlan) int {
	if p.task {
		return 1
	}
	return 0
}

// outputSize draws a tool output size from the benchmark distribution.
func outputSize(r *rand.Rand) int {
	switch x := r.IntN(1000); {
	case x < 550:
		return between(r, 100, 2000)
	case x < 800:
		return between(r, 2000, 5000)
	case x < 950:
		return between(r, 5000, 50000)
	case x < 995:
		return between(r, 50000, 300000)
	default:
		return between(r, 300000, 2000000)
	}
}

// callRand re-seeds and returns the per-call random stream of c.
func (g *gen) callRand(c *call) *rand.Rand {
	g.pcg.Seed(c.seed, uint64(g.o.Seed))
	return g.cr
}

// appendPath appends the file path call c works on, JSON-escaped (without
// quotes).
func (g *gen) appendPath(b []byte, c *call) []byte {
	return g.pathTail(appendEscaped(b, g.o.Cwd), c)
}

// appendPathRaw appends the file path call c works on, unescaped.
func (g *gen) appendPathRaw(b []byte, c *call) []byte {
	return g.pathTail(append(b, g.o.Cwd...), c)
}

// pathTail appends the part of the path below the working directory; it is
// plain ASCII, so the escaped and raw forms agree.
func (g *gen) pathTail(b []byte, c *call) []byte {
	b = append(b, "/internal/"...)
	b = append(b, words[20+c.arg%60]...)
	b = append(b, '/')
	b = append(b, words[80+(c.arg/60)%60]...)
	if c.image {
		return append(b, ".png"...)
	}
	return append(b, ".go"...)
}

// callExtras regenerates the text a call's input shares with its result:
// Edit old/new strings (raw2 = old + "\x00" + new), the todo array (esc2),
// the Task prompt or the Write content (raw2). r must be fresh from callRand.
func (g *gen) callExtras(c *call, r *rand.Rand) {
	switch c.tool {
	case toolEdit:
		b := appendWords(g.raw2[:0], r, between(r, 3, 30))
		b = append(b, 0)
		g.raw2 = appendWords(b, r, between(r, 3, 40))
	case toolTodo:
		b := append(g.esc2[:0], '[')
		for i, n := 0, between(r, 2, 6); i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"content":`...)
			w := appendWords(g.raw2[:0], r, between(r, 3, 9))
			b = appendString(b, w)
			b = append(b, `,"status":"`...)
			b = append(b, [3]string{"completed", "in_progress", "pending"}[r.IntN(3)]...)
			b = append(b, `","activeForm":`...)
			b = appendString(b, w)
			b = append(b, '}')
			g.raw2 = w
		}
		g.esc2 = append(b, ']')
	case toolTask:
		g.raw2 = appendProse(g.raw2[:0], r, between(r, 100, 600))
	case toolWrite:
		g.raw2 = appendOutput(g.raw2[:0], r, styleCode, c.size)
	}
}

// writeToolUse writes the tool_use line of c as part of message m.
func (g *gen) writeToolUse(m *amsg, c *call, stop string) {
	r := g.callRand(c)
	g.callExtras(c, r)
	b := append(g.esc[:0], `{"type":"tool_use","id":"`...)
	b = append(b, c.id...)
	b = append(b, `","name":"`...)
	b = append(b, toolNames[c.tool]...)
	b = append(b, `","input":{`...)
	switch c.tool {
	case toolBash:
		b = append(b, `"command":`...)
		b = appendString(b, commands[c.arg%len(commands)])
		b = append(b, `,"description":"Run `...)
		b = appendEscaped(b, commands[c.arg%len(commands)])
		b = append(b, `"`...)
	case toolRead, toolEdit, toolWrite:
		b = append(b, `"file_path":"`...)
		b = g.appendPath(b, c)
		b = append(b, '"')
		switch c.tool {
		case toolEdit:
			old, nw := splitNUL(g.raw2)
			b = append(b, `,"old_string":`...)
			b = appendString(b, old)
			b = append(b, `,"new_string":`...)
			b = appendString(b, nw)
		case toolWrite:
			b = append(b, `,"content":`...)
			b = appendString(b, g.raw2)
		}
	case toolGrep:
		b = append(b, `"pattern":`...)
		b = appendString(b, words[20+c.arg%120])
		b = append(b, `,"path":`...)
		b = appendString(b, g.o.Cwd)
		b = append(b, `,"output_mode":"content","-n":true`...)
	case toolGlob:
		b = append(b, `"pattern":"**/*.go"`...)
	case toolTodo:
		b = append(b, `"todos":`...)
		b = append(b, g.esc2...)
	case toolFetch:
		b = append(b, `"url":"https://docs.example.org/`...)
		b = append(b, words[20+c.arg%120]...)
		b = append(b, `","prompt":"Summarise the relevant parts"`...)
	case toolTask:
		b = append(b, `"description":"Explore `...)
		b = append(b, words[20+c.arg%120]...)
		b = append(b, `","prompt":`...)
		b = appendString(b, g.raw2)
		b = append(b, `,"subagent_type":"general-purpose"`...)
	case toolMCP:
		b = append(b, `"query":`...)
		b = appendString(b, words[20+c.arg%120])
	}
	b = append(b, `},"caller":{"type":"direct"}}`...)
	g.esc = b
	g.assistantLineU(m, b, stop, "assistant/tool_use", c.use)
	c.useLine = g.m.Lines
	g.m.ToolUses++
}

// splitNUL splits b at its first NUL byte.
func splitNUL(b []byte) ([]byte, []byte) {
	for i, x := range b {
		if x == 0 {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}
