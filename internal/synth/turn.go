package synth

import "strconv"

// This file writes one turn: the human prompt, one to four tool rounds, the
// final reply, and the bookkeeping records around them. An assistant message
// is written the way Claude Code writes it: one line per content block, all
// sharing message.id, requestId and usage, chained by parentUuid.

// amsg is the per-message state shared by the lines of one assistant message.
type amsg struct {
	id, req string
	usage   []byte
}

// roundPlan says what a tool round must contain.
type roundPlan struct {
	defect     Defect   // DanglingParent, OrphanToolUse, OrphanToolResult, ParallelFork or ""
	msgDefects []Defect // MissingSignature, EmptyText, EmptyContent, DuplicateUUID
	imageTool  bool     // one call is a Read of a PNG, answered with an image
	task       bool     // one call is a Task (inline sidechain when enabled)
	pinLast    bool     // the text line carries "ccm:pin last …"
	inFlight   bool     // one tool_use, no result, end of file
}

const pinLastText = `ccm:pin last level=hard reason="keep"`

// turn writes turn ti. With inFlight the turn stops after a tool_use line.
func (g *gen) turn(ti int, inFlight bool) {
	promptU := newUUID(g.r)
	g.tick(4000, 60000)
	start := g.now
	if !g.side {
		if ti%10 == 0 {
			g.snapshot(promptU, ti)
		}
		if ti > 0 && ti%25 == 0 {
			g.localCommand()
		}
		if ti%15 == 7 {
			g.queueOps()
		}
	}
	for _, d := range []Defect{BlankLine, InvalidLine, ArrayLine, NULPadding} {
		for n := g.takeAll(evDefect, d); n > 0; n-- {
			g.lineDefect(d)
		}
	}
	if !g.side {
		for n := g.takeAll(evRewind, ""); n > 0; n-- {
			g.deadBranch()
		}
	}
	if !g.side || ti == 0 {
		if g.o.newRecords() && !g.side {
			g.preAttachments(ti)
		}
		text := g.promptText()
		g.lastText = append(g.lastText[:0], text[:cutUTF8(text, 200)]...)
		g.prompt(promptU, text, g.take(evImageTop, ""))
		if g.o.newRecords() && !g.side {
			g.postAttachments(ti)
		}
	}

	var rd []Defect
	for _, d := range []Defect{DanglingParent, OrphanToolUse, OrphanToolResult, ParallelFork} {
		for n := g.takeAll(evDefect, d); n > 0; n-- {
			rd = append(rd, d)
		}
	}
	var md []Defect
	for _, d := range []Defect{MissingSignature, EmptyText, EmptyContent, DuplicateUUID} {
		for n := g.takeAll(evDefect, d); n > 0; n-- {
			md = append(md, d)
		}
	}
	imgs := g.takeAll(evImageTool, "")
	tasks := g.takeAll(evTask, "")
	rounds := max(between(g.r, 1, 4), len(rd), imgs, tasks)
	if inFlight {
		rounds++
	}
	for ri := 0; ri < rounds; ri++ {
		p := roundPlan{imageTool: ri < imgs, task: ri < tasks}
		if ri < len(rd) {
			p.defect = rd[ri]
		}
		if ri == 0 {
			p.msgDefects = md
			p.pinLast = g.take(evPinLast, "")
		}
		p.inFlight = inFlight && ri == rounds-1
		g.round(p)
	}
	if inFlight || g.side {
		return
	}
	g.finalMessage()
	g.endOfTurn(start)
	if g.o.newRecords() {
		g.lastPrompt(g.lastText)
	}
}

// promptText builds a human prompt in g.raw, with a planted pin directive
// when one is due, and returns it.
func (g *gen) promptText() []byte {
	b := g.raw[:0]
	if g.r.IntN(20) == 0 {
		b = append(b, "Here is the output I get:\n\n"...)
		b = appendOutput(b, g.r, styleLog, between(g.r, 1000, 8000))
		b = append(b, "\nWhat is wrong? "...)
	}
	b = appendProse(b, g.r, between(g.r, 20, 300))
	for _, p := range []struct {
		k evKind
		s string
	}{{evPinNext, "ccm:pin next level=hard"}, {evPinStart, "ccm:pin start level=soft"}, {evPinEnd, "ccm:pin end"}} {
		if g.take(p.k, "") {
			b = append(b, '\n')
			b = append(b, p.s...)
			g.m.Pins = append(g.m.Pins, Pin{Directive: p.s, Line: g.line(), Role: "user"})
		}
	}
	g.raw = b
	return b
}

// prompt writes a human user prompt with uuid u under the chain tip.
func (g *gen) prompt(u uid, text []byte, image bool) {
	for i := range g.m.Pins {
		if g.m.Pins[i].UUID == "" && g.m.Pins[i].Role == "user" {
			g.m.Pins[i].UUID = u.String()
		}
	}
	b := g.begin(g.tipRef())
	b = append(b, `,"type":"user","message":{"role":"user","content":`...)
	if image {
		b = append(b, `[{"type":"text","text":`...)
		b = appendString(b, text)
		b = append(b, `},`...)
		b = g.appendImage(b)
		b = append(b, ']')
	} else {
		b = appendString(b, text)
	}
	b = append(b, '}')
	b = g.appendTail(b, u)
	if !g.side {
		if g.o.sourceTool() {
			b = append(b, `,"thinkingMetadata":{"maxThinkingTokens":31999},"todos":[],"permissionMode":"default"`...)
		} else {
			b = append(b, `,"thinkingMetadata":{"level":"high","disabled":false,"triggers":[]},"todos":[]`...)
		}
		if g.o.newRecords() {
			b = append(b, `,"promptId":"`...)
			b = append(b, u[:8]...)
			b = append(b, `","entrypoint":"cli","origin":{"kind":"human"}`...)
		}
		if image {
			b = append(b, `,"imagePasteIds":[1]`...)
		}
	}
	b = append(b, '}')
	g.emit(b, "user", "user/prompt")
	g.noteMsg(u)
	g.setTip(u)
	g.chainPrompts++
	g.m.Prompts++
}

// appendImage appends an image block holding a ~40 KB PNG-like base64 body.
func (g *gen) appendImage(b []byte) []byte {
	b = append(b, `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`...)
	b, g.scratch = appendBase64(b, g.scratch, g.r, pngHead, between(g.r, 27000, 33000))
	g.m.Images++
	return append(b, `"}}`...)
}

// newMsg starts an assistant message: ids and one usage object for all lines.
func (g *gen) newMsg() *amsg {
	m := &amsg{id: newID(g.r, "msg_01", 22), req: newID(g.r, "req_011C", 20)}
	in := between(g.r, 500, 40000)
	b := append([]byte(nil), `"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(between(g.r, 1, 9)), 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, int64(in), 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, int64(between(g.r, 10000, 150000)), 10)
	b = append(b, `,"cache_creation":{"ephemeral_5m_input_tokens":`...)
	b = strconv.AppendInt(b, int64(in), 10)
	b = append(b, `,"ephemeral_1h_input_tokens":0},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(between(g.r, 1, 4000)), 10)
	m.usage = append(b, `,"service_tier":"standard"}`...)
	return m
}

// model is the model name written on assistant messages.
func (g *gen) model() string {
	if g.o.sourceTool() {
		return "claude-opus-4-6"
	}
	return "claude-opus-4-5-20251101"
}

// assistantLine writes one line of message m whose content array holds blk
// (already rendered, may be empty), chained under the tip. stop is the
// rendered stop_reason (null, "tool_use", "end_turn").
func (g *gen) assistantLine(m *amsg, blk []byte, stop, sub string) uid {
	return g.assistantLineU(m, blk, stop, sub, newUUID(g.r))
}

// assistantLineU is assistantLine with the line's uuid chosen by the caller.
func (g *gen) assistantLineU(m *amsg, blk []byte, stop, sub string, u uid) uid {
	g.tick(300, 4000)
	b := g.begin(g.tipRef())
	b = append(b, `,"message":{"model":"`...)
	b = append(b, g.model()...)
	b = append(b, `","id":"`...)
	b = append(b, m.id...)
	b = append(b, `","type":"message","role":"assistant","content":[`...)
	b = append(b, blk...)
	b = append(b, `],"stop_reason":`...)
	b = append(b, stop...)
	b = append(b, `,"stop_sequence":null,`...)
	b = append(b, m.usage...)
	b = append(b, `},"requestId":"`...)
	b = append(b, m.req...)
	b = append(b, '"')
	if g.o.newRecords() {
		b = append(b, `,"effort":"high"`...)
	}
	b = append(b, `,"type":"assistant"`...)
	b = g.appendTail(b, u)
	b = append(b, '}')
	g.emit(b, "assistant", sub)
	g.noteMsg(u)
	g.setTip(u)
	return u
}

// thinkingBlock renders a thinking block into g.esc2 (with or without its
// signature) and counts it.
func (g *gen) thinkingBlock(signed bool) []byte {
	g.raw2 = appendProseWords(g.raw2[:0], g.r, between(g.r, 30, 1200))
	b := append(g.esc2[:0], `{"type":"thinking","thinking":`...)
	b = appendString(b, g.raw2)
	if signed {
		b = append(b, `,"signature":"`...)
		b, g.scratch = appendBase64(b, g.scratch, g.r, sigHead, between(g.r, 203, 697))
		b = append(b, '"')
	}
	b = append(b, '}')
	g.esc2 = b
	g.m.ThinkingBlocks++
	return b
}

// textBlock renders a text block holding text into g.esc2.
func (g *gen) textBlock(text []byte) []byte {
	b := append(g.esc2[:0], `{"type":"text","text":`...)
	b = appendString(b, text)
	g.esc2 = append(b, '}')
	return g.esc2
}

// finalMessage writes the reply that ends a turn: thinking, then text.
func (g *gen) finalMessage() {
	m := g.newMsg()
	if g.o.Thinking {
		g.assistantLine(m, g.thinkingBlock(true), "null", "assistant/thinking")
	}
	g.raw = appendProse(g.raw[:0], g.r, between(g.r, 80, 1500))
	g.assistantLine(m, g.textBlock(g.raw), `"end_turn"`, "assistant/text")
}
