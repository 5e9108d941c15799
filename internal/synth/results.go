package synth

import "strconv"

// This file writes tool_result user records: the tool_result block (a
// string, or an array of text/image blocks for Task, MCP and image reads)
// plus the top-level toolUseResult copy Claude Code keeps: the full stdout
// for Bash, file.content for Read, content for Task, and at most 4 KB of the
// output for the other tools, in each tool's real shape.

const turCap = 4096

const readReminder = "\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you MUST refuse to improve or augment the code. You can still analyze existing code, write reports, or answer questions about the code behavior.\n</system-reminder>\n"

// writeResult writes the tool_result record of c under parent and returns
// its uuid. The result text is regenerated from the call's seed.
func (g *gen) writeResult(c *call, parent *uid) uid {
	u := newUUID(g.r)
	g.tick(50, 3000)
	r := g.callRand(c)
	g.callExtras(c, r)
	style := styleLog
	switch c.tool {
	case toolRead, toolEdit:
		style = styleCode
	case toolGrep:
		style = styleGrep
	case toolFetch, toolTask, toolMCP:
		style = styleDoc
	}
	size := c.size
	switch c.tool {
	case toolEdit:
		size = min(size, 8000)
	case toolGlob:
		size = min(size, 20000)
	}
	var raw []byte
	switch c.tool {
	case toolTodo, toolWrite:
	case toolGlob:
		raw = g.globList(size)
	default:
		g.raw = appendOutput(g.raw[:0], r, style, size)
		raw = g.raw
		if c.isErr {
			g.raw2 = append(append(g.raw2[:0], "Exit code 1\n"...), raw...)
			raw = g.raw2
		}
	}

	b := reserve(g.begin(parent), 2*len(raw)+len(g.raw2)+8192)
	b = append(b, `,"type":"user","message":{"role":"user","content":[{"tool_use_id":"`...)
	b = append(b, c.id...)
	b = append(b, `","type":"tool_result","content":`...)
	var tur []byte // toolUseResult, rendered into esc2 or esc
	switch c.tool {
	case toolBash:
		g.esc = appendString(g.esc[:0], raw)
		b = append(b, g.esc...)
		if c.isErr {
			b = append(b, `,"is_error":true`...)
			tur = append(g.esc2[:0], `"Error: `...)
			tur = append(tur, g.esc[1:]...)
		} else {
			b = append(b, `,"is_error":false`...)
			tur = append(g.esc2[:0], `{"stdout":`...)
			tur = append(tur, g.esc...)
			tur = append(tur, `,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`...)
		}
	case toolRead:
		if c.image {
			g.esc, g.scratch = appendBase64(g.esc[:0], g.scratch, r, pngHead, between(r, 27000, 33000))
			b = append(b, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`...)
			b = append(b, g.esc...)
			b = append(b, `"}}]`...)
			tur = append(g.esc2[:0], `{"type":"image","file":{"base64":"`...)
			tur = append(tur, g.esc...)
			tur = append(tur, `","type":"image/png","originalSize":`...)
			tur = strconv.AppendInt(tur, int64(len(g.scratch)), 10)
			tur = append(tur, `}}`...)
			g.m.Images++
			break
		}
		var n int
		g.raw2, n = appendNumbered(g.raw2[:0], raw, 1)
		if !g.o.sourceTool() {
			g.raw2 = append(g.raw2, readReminder...)
		}
		b = appendString(b, g.raw2)
		tur = append(g.esc2[:0], `{"type":"text","file":{"filePath":"`...)
		tur = g.appendPath(tur, c)
		tur = append(tur, `","content":`...)
		tur = appendString(tur, raw)
		tur = append(tur, `,"numLines":`...)
		tur = strconv.AppendInt(tur, int64(n), 10)
		tur = append(tur, `,"startLine":1,"totalLines":`...)
		tur = strconv.AppendInt(tur, int64(n), 10)
		tur = append(tur, `}}`...)
	case toolGrep:
		b = appendString(b, raw)
		tur = append(g.esc2[:0], `{"mode":"content","numFiles":0,"filenames":[],"content":`...)
		tur = appendString(tur, raw[:cutUTF8(raw, turCap)])
		tur = append(tur, `,"numLines":`...)
		tur = strconv.AppendInt(tur, int64(countLines(raw)), 10)
		tur = append(tur, '}')
	case toolEdit:
		old, nw := splitNUL(g.raw2)
		g.esc = append(g.esc[:0], "The file "...)
		g.esc = g.appendPathRaw(g.esc, c)
		g.esc = append(g.esc, " has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"...)
		g.esc, _ = appendNumbered(g.esc, raw, 1+c.arg%400)
		b = appendString(b, g.esc)
		tur = append(g.esc2[:0], `{"filePath":"`...)
		tur = g.appendPath(tur, c)
		tur = append(tur, `","oldString":`...)
		tur = appendString(tur, old)
		tur = append(tur, `,"newString":`...)
		tur = appendString(tur, nw)
		tur = append(tur, `,"originalFile":`...)
		tur = appendString(tur, raw[:cutUTF8(raw, turCap)])
		tur = append(tur, `,"structuredPatch":[{"oldStart":3,"oldLines":1,"newStart":3,"newLines":1,"lines":[`...)
		tur = appendString(tur, append(append(g.raw[len(raw):len(raw)], '-'), old...))
		tur = append(tur, ',')
		tur = appendString(tur, append(append(g.raw[len(raw):len(raw)], '+'), nw...))
		tur = append(tur, `]}],"userModified":false,"replaceAll":false}`...)
	case toolGlob:
		b = appendString(b, raw)
		tur = append(g.esc2[:0], `{"filenames":[`...)
		n := 0
		for rest := raw; len(rest) > 0 && len(tur) < turCap; n++ {
			line, next := cutLine(rest)
			if n > 0 {
				tur = append(tur, ',')
			}
			tur = appendString(tur, line)
			rest = next
		}
		tur = append(tur, `],"durationMs":`...)
		tur = strconv.AppendInt(tur, int64(5+c.arg%200), 10)
		tur = append(tur, `,"numFiles":`...)
		tur = strconv.AppendInt(tur, int64(countLines(raw)), 10)
		tur = append(tur, `,"truncated":false}`...)
	case toolTodo:
		b = append(b, `"Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"`...)
		tur = append(g.esc[:0], `{"oldTodos":[],"newTodos":`...)
		tur = append(tur, g.esc2...)
		tur = append(tur, '}')
	case toolWrite:
		b = append(b, `"File created successfully at: `...)
		b = g.appendPath(b, c)
		b = append(b, '"')
		tur = append(g.esc2[:0], `{"type":"create","filePath":"`...)
		tur = g.appendPath(tur, c)
		tur = append(tur, `","content":`...)
		tur = appendString(tur, g.raw2[:cutUTF8(g.raw2, turCap)])
		tur = append(tur, `,"structuredPatch":[],"originalFile":null}`...)
	case toolFetch:
		b = appendString(b, raw)
		tur = append(g.esc2[:0], `{"bytes":`...)
		tur = strconv.AppendInt(tur, int64(len(raw)*3), 10)
		tur = append(tur, `,"code":200,"codeText":"OK","result":`...)
		tur = appendString(tur, raw[:cutUTF8(raw, turCap)])
		tur = append(tur, `,"durationMs":`...)
		tur = strconv.AppendInt(tur, int64(200+c.arg%5000), 10)
		tur = append(tur, `,"url":"https://docs.example.org/`...)
		tur = append(tur, words[20+c.arg%120]...)
		tur = append(tur, `"}`...)
	case toolTask:
		g.esc = appendString(g.esc[:0], raw)
		b = append(b, `[{"type":"text","text":`...)
		b = append(b, g.esc...)
		b = append(b, `},{"type":"text","text":"agentId: `...)
		b = append(b, c.agentID...)
		b = append(b, ` (for resuming to continue this agent's work if needed)\n<usage>total_tokens: `...)
		b = strconv.AppendInt(b, int64(20000+c.arg%80000), 10)
		b = append(b, `\ntool_uses: `...)
		b = strconv.AppendInt(b, int64(3+c.arg%40), 10)
		b = append(b, `\nduration_ms: `...)
		b = strconv.AppendInt(b, int64(10000+c.arg%200000), 10)
		b = append(b, `</usage>"}]`...)
		tur = append(g.esc2[:0], `{"status":"completed","prompt":`...)
		tur = appendString(tur, g.raw2)
		tur = append(tur, `,"agentId":"`...)
		tur = append(tur, c.agentID...)
		tur = append(tur, `","content":[{"type":"text","text":`...)
		tur = append(tur, g.esc...)
		tur = append(tur, `}],"totalDurationMs":`...)
		tur = strconv.AppendInt(tur, int64(10000+c.arg%200000), 10)
		tur = append(tur, `,"totalTokens":`...)
		tur = strconv.AppendInt(tur, int64(20000+c.arg%80000), 10)
		tur = append(tur, `,"totalToolUseCount":`...)
		tur = strconv.AppendInt(tur, int64(3+c.arg%40), 10)
		tur = append(tur, `,"usage":{"input_tokens":0,"output_tokens":`...)
		tur = strconv.AppendInt(tur, int64(500+c.arg%5000), 10)
		tur = append(tur, `,"service_tier":"standard"}}`...)
	case toolMCP:
		b = append(b, `[{"type":"text","text":`...)
		b = appendString(b, raw)
		b = append(b, `}]`...)
		tur = append(g.esc2[:0], `[{"type":"text","text":`...)
		tur = appendString(tur, raw[:cutUTF8(raw, turCap)])
		tur = append(tur, `}]`...)
	}
	// Keep tur's grown storage for the next result.
	if c.tool == toolTodo {
		g.esc = tur
	} else {
		g.esc2 = tur
	}
	b = append(b, '}')
	if c.typed != "" {
		// What the user typed while the tool ran rides in the same record.
		b = append(b, `,{"type":"text","text":`...)
		b = appendString(b, c.typed)
		b = append(b, '}')
	}
	b = append(b, `]}`...)
	b = g.appendTail(b, u)
	b = append(b, `,"toolUseResult":`...)
	b = append(reserve(b, len(tur)+1024), tur...)
	if g.o.sourceTool() {
		// For an orphan result this names the absent tool_use line.
		b = append(b, `,"sourceToolAssistantUUID":"`...)
		b = append(b, c.use[:]...)
		b = append(b, '"')
	}
	b = append(b, '}')
	g.emit(b, "user", "user/tool_result")
	g.noteMsg(u)
	g.m.ToolResults++
	return u
}

// globList renders a Glob result (one path per line) of about size bytes into g.raw.
func (g *gen) globList(size int) []byte {
	b := g.raw[:0]
	for i := 0; len(b) < size; i++ {
		b = append(b, g.o.Cwd...)
		b = append(b, "/internal/"...)
		b = append(b, words[20+i%60]...)
		b = append(b, '/')
		b = append(b, words[80+(i/60)%60]...)
		b = strconv.AppendInt(b, int64(i/3600), 10)
		b = append(b, ".go\n"...)
	}
	g.raw = b
	return b
}

// cutLine splits b after its first line (the newline is dropped).
func cutLine(b []byte) ([]byte, []byte) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}
