package synth

import "strconv"

// This file writes the per-turn records of Claude Code 2.1.226+ (observed in
// bulk with 2.1.330, docs/transcript-format.md, "A resume only appends"):
// attachment records (environment, date, skill_listing, deferred_tools_delta
// before the prompt; prompt_snapshot after it), then api-request-shape and
// api-request-blob.
// Attachments are chain records (uuid/parentUuid like user and assistant
// records; the turn's assistant records hang off its prompt_snapshot);
// api-request-shape and api-request-blob carry no uuid and no parentUuid,
// as in a session the real 2.1.330 client wrote. The bulk lives in one big
// field per record (prompt_snapshot.systemPrompt 65–140 KB,
// api-request-shape.shape 38–76 KB, api-request-blob.message 12–93 KB).

// attachment writes a chained attachment record; body is the rendered
// attachment object.
func (g *gen) attachment(body []byte, sub string) {
	u := newUUID(g.r)
	g.tick(1, 50)
	b := g.begin(g.tipRef())
	b = append(b, `,"type":"attachment","attachment":`...)
	b = append(b, body...)
	b = g.appendTail(b, u)
	b = append(b, '}')
	g.emit(b, "attachment", sub)
	g.setTip(u)
}

// systemAttachment renders {"type":typ,"content":<text>,"renderedRole":"system"}.
func (g *gen) systemAttachment(typ string, text []byte) []byte {
	b := append(g.esc[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","content":`...)
	b = appendString(b, text)
	b = append(b, `,"renderedRole":"system"}`...)
	g.esc = b
	return b
}

// preAttachments writes the system-rendered attachments that precede a
// prompt: environment and date every turn, the skill listing and deferred
// tools at the start and after each compaction.
func (g *gen) preAttachments(ti int) {
	fresh := ti == 0 || g.chainPrompts == 0
	if fresh {
		g.raw = appendOutput(g.raw[:0], g.r, styleDoc, between(g.r, 12000, 16000))
		g.attachment(g.systemAttachment("skill_listing", g.raw), "attachment/skill_listing")
		b := append(g.esc2[:0], `{"type":"deferred_tools_delta","added":[`...)
		for i := 0; i < 10; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `"mcp__`...)
			b = append(b, words[80+i]...)
			b = append(b, `__`...)
			b = append(b, words[100+i]...)
			b = append(b, '"')
		}
		g.esc2 = append(b, `],"removed":[]}`...)
		g.attachment(g.esc2, "attachment/deferred_tools_delta")
	}
	t := append(g.raw[:0], "<env>\nWorking directory: "...)
	t = append(t, g.o.Cwd...)
	t = append(t, "\nIs directory a git repo: Yes\nPlatform: linux\nOS Version: Linux 6.8.0\n</env>\n"...)
	g.raw = appendProse(t, g.r, between(g.r, 200, 800))
	g.attachment(g.systemAttachment("environment", g.raw), "attachment/environment")
	t = append(g.raw[:0], "Today's date is "...)
	t = appendTime(t, g.now)
	g.raw = t
	g.attachment(g.systemAttachment("date", g.raw), "attachment/date")
}

// postAttachments writes the prompt snapshot and the api-request records of
// the turn's first request.
func (g *gen) postAttachments(ti int) {
	g.raw = appendProse(g.raw[:0], g.r, between(g.r, 65000, 140000))
	b := append(g.esc[:0], `{"type":"prompt_snapshot","model":"claude-opus-5-5","systemPrompt":`...)
	b = appendString(b, g.raw)
	b = append(b, `,"hash":"`...)
	b = appendID(b, g.r, "", 16)
	g.esc = append(b, `"}`...)
	g.attachment(g.esc, "attachment/prompt_snapshot")

	// The api-request records are not in the parent chain: no uuid, no
	// parentUuid (as Claude Code 2.1.330 writes them, seen in a session the
	// real client wrote in a scripted hook session).
	g.tick(5, 100)
	b = append(g.rec[:0], `{"type":"api-request-shape","sessionId":`...)
	b = appendString(b, g.o.SessionID)
	b = append(b, `,"shapeHash":"`...)
	b = appendID(b, g.r, "", 64)
	b = append(b, `","timestamp":`...)
	b = appendTime(b, g.now)
	b = append(b, `,"version":`...)
	b = appendString(b, g.o.Version)
	b = append(b, `,"shape":{"model":"claude-opus-5-5","max_tokens":64000,"stream":true,"thinking":{"type":"adaptive"},"requestIndex":`...)
	b = strconv.AppendInt(b, int64(ti), 10)
	b = append(b, `,"tools":[`...)
	for i := 0; i < 12; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":"`...)
		b = append(b, toolNames[i%len(toolNames)]...)
		b = append(b, `","description":`...)
		g.raw = appendProse(g.raw[:0], g.r, between(g.r, 3000, 6000))
		b = appendString(b, g.raw)
		b = append(b, '}')
	}
	b = append(b, `],"messages":`...)
	b = strconv.AppendInt(b, int64(2*g.chainPrompts), 10)
	b = append(b, `}}`...)
	g.emit(b, "api-request-shape", "")

	g.tick(1, 20)
	b = append(g.rec[:0], `{"type":"api-request-blob","sessionId":`...)
	b = appendString(b, g.o.SessionID)
	b = append(b, `,"hash":"`...)
	b = appendID(b, g.r, "", 64)
	b = append(b, `","message":{"encoding":"base64","mediaType":"application/zstd","data":"`...)
	b, g.scratch = appendBase64(b, g.scratch, g.r, []byte{0x28, 0xb5, 0x2f, 0xfd}, between(g.r, 9000, 70000))
	b = append(b, `"}}`...)
	g.emit(b, "api-request-blob", "")
}

// lastPrompt writes the last-prompt metadata record (no uuid).
func (g *gen) lastPrompt(text []byte) {
	b := append(g.rec[:0], `{"type":"last-prompt","lastPrompt":`...)
	b = appendString(b, text[:cutUTF8(text, 200)])
	b = append(b, `,"sessionId":`...)
	b = appendString(b, g.o.SessionID)
	g.emit(append(b, '}'), "last-prompt", "")
}
