package transcript

import "fmt"

// BlockRef names one content block of one record.
type BlockRef struct {
	Rec   int // the record number (Index.Rec)
	Block int // index into that record's Blocks; -1 for string content
}

// Message is one API message as the active chain produces it: consecutive
// records of the same role merged (the lines of one assistant response, the
// results of parallel tool calls), progress, system, meta and synthetic
// API-error records left out, as Claude Code leaves them out.
type Message struct {
	Role   string
	Recs   []int
	Blocks []BlockRef
}

// Messages builds the API message sequence of a chain.
func (ix *Index) Messages(c *Chain) []Message {
	var msgs []Message
	for _, i := range c.Recs {
		f := ix.Rec(i)
		if !f.IsConversation() || f.Meta || f.APIError {
			continue
		}
		role := "user"
		if f.Type == TypeAssistant {
			role = "assistant"
		}
		if n := len(msgs); n == 0 || msgs[n-1].Role != role {
			msgs = append(msgs, Message{Role: role})
		}
		m := &msgs[len(msgs)-1]
		m.Recs = append(m.Recs, i)
		if f.ContentString {
			m.Blocks = append(m.Blocks, BlockRef{Rec: i, Block: -1})
			continue
		}
		for b := range f.NumBlocks() {
			m.Blocks = append(m.Blocks, BlockRef{Rec: i, Block: b})
		}
	}
	if len(c.Attached) > 0 {
		msgs = ix.placeAllAttached(msgs, c.Attached)
	}
	return msgs
}

// attachedPlacer finds the message an attached record belongs to through
// maps, not a walk over every message per record: a long session has
// thousands of attached records (parallel tool results, the later lines
// of a response), and walking all messages for each made building the
// messages of a 1 GB transcript quadratic.
type attachedPlacer struct {
	ix   *Index
	msgs []Message
	// toolUse is the first assistant message holding a tool_use id,
	// msgID the first holding a line of a message.id.
	toolUse, msgID map[string]int
	// after[k] is a user message that goes right after msgs[k], which
	// is not followed by one; spliced in once every record is placed.
	after map[int]*Message
	order []int // the keys of after, in the order they were made
}

// placeAllAttached places every attached record (see place), one after
// the other.
func (ix *Index) placeAllAttached(msgs []Message, attached []int) []Message {
	p := &attachedPlacer{ix: ix, msgs: msgs, toolUse: make(map[string]int), msgID: make(map[string]int),
		after: make(map[int]*Message)}
	for k := range msgs {
		if msgs[k].Role == "assistant" {
			p.note(k, msgs[k].Blocks, msgs[k].Recs)
		}
	}
	for _, rec := range attached {
		p.place(rec)
	}
	if len(p.order) == 0 {
		return p.msgs
	}
	// Splice in the new user messages, each after its assistant message.
	out := make([]Message, 0, len(p.msgs)+len(p.order))
	for k := range p.msgs {
		out = append(out, p.msgs[k])
		if m := p.after[k]; m != nil {
			out = append(out, *m)
		}
	}
	return out
}

// note records the tool_use ids and message ids of blocks and records
// that assistant message k now holds, unless an earlier message holds
// them too.
func (p *attachedPlacer) note(k int, blocks []BlockRef, recs []int) {
	for _, r := range blocks {
		if b := p.ix.block(r); b.Type == BlockToolUse {
			if k0, ok := p.toolUse[b.ID]; !ok || k < k0 {
				p.toolUse[b.ID] = k
			}
		}
	}
	for _, r := range recs {
		id := p.ix.Rec(r).MsgID()
		if _, ok := p.msgID[id]; !ok {
			p.msgID[id] = k
		}
	}
}

// place puts one attached record where it belongs: an
// assistant line into the assistant message holding the other lines of
// its message.id; a tool-result record into the user message after the
// assistant message holding its tool_use (its results after the tool
// results already there, its other blocks at the end), or into a new
// user message when none follows. A record with no such message is left
// out.
func (p *attachedPlacer) place(rec int) {
	ix := p.ix
	f := ix.Rec(rec)
	if f.Type == TypeAssistant {
		k, ok := p.msgID[f.MsgID()]
		if !ok {
			return
		}
		m := &p.msgs[k]
		m.Recs = append(m.Recs, rec)
		start := len(m.Blocks)
		for b := range f.NumBlocks() {
			m.Blocks = append(m.Blocks, BlockRef{Rec: rec, Block: b})
		}
		p.note(k, m.Blocks[start:], nil)
		return
	}
	id := ""
	var results, rest []BlockRef
	for b := range f.NumBlocks() {
		if f.Block(b).Type == BlockToolResult {
			if id == "" {
				id = f.Block(b).ID
			}
			results = append(results, BlockRef{Rec: rec, Block: b})
		} else {
			rest = append(rest, BlockRef{Rec: rec, Block: b})
		}
	}
	k, ok := p.toolUse[id]
	if !ok {
		return
	}
	var m *Message
	switch {
	case k+1 < len(p.msgs) && p.msgs[k+1].Role == "user":
		m = &p.msgs[k+1]
	case p.after[k] != nil:
		m = p.after[k]
	default:
		p.after[k] = &Message{Role: "user", Recs: []int{rec}, Blocks: append(results, rest...)}
		p.order = append(p.order, k)
		return
	}
	// The results go after the results already there, anything else the
	// record holds at the end of the turn.
	at := 0
	for at < len(m.Blocks) && ix.block(m.Blocks[at]).Type == BlockToolResult {
		at++
	}
	m.Blocks = append(m.Blocks[:at], append(results, m.Blocks[at:]...)...)
	m.Blocks = append(m.Blocks, rest...)
	m.Recs = append(m.Recs, rec)
}

// block returns the facts of a referenced block; string content reads as
// one text block.
func (ix *Index) block(r BlockRef) BlockFacts {
	f := ix.Rec(r.Rec)
	if r.Block < 0 {
		return BlockFacts{Type: BlockText, Empty: f.ContentEmpty}
	}
	return f.Block(r.Block)
}

// Severity ranks a finding.
type Severity uint8

// Severities: an Error breaks a resume (an API error or silently lost
// history); a Warning does not, but is worth knowing.
const (
	Warning Severity = iota
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Finding is one problem found in a transcript, at a line.
type Finding struct {
	Line     int
	Severity Severity
	Code     string // stable short name, e.g. "orphan-tool-use"
	Text     string
}

// CheckAPI applies the Messages API rules to the messages of a chain:
// no empty message or text block; thinking only in assistant messages,
// with a real signature; every tool_use answered in the next user message; every
// tool_result answering a tool_use of the previous assistant message, and
// placed before other content; unique tool_use ids with object inputs.
// A tool_use in the very last message has no next message yet: that is a
// call in flight (or interrupted), reported as a warning.
func (ix *Index) CheckAPI(c *Chain, msgs []Message) []Finding {
	var out []Finding
	add := func(rec int, sev Severity, code, format string, args ...any) {
		out = append(out, Finding{Line: int(ix.Rec(rec).Line), Severity: sev, Code: code, Text: fmt.Sprintf(format, args...)})
	}
	for _, i := range c.Recs {
		f := ix.Rec(i)
		if f.IsConversation() && !f.Meta && !f.APIError && f.ContentEmpty {
			add(i, Error, "empty-content", "%s message has empty content", f.TypeName())
		}
	}
	seen := make(map[string]bool)
	for k := range msgs {
		m := &msgs[k]
		uses := make(map[string]bool)
		for _, r := range m.Blocks {
			b := ix.block(r)
			switch b.Type {
			case BlockText:
				if b.Empty && r.Block >= 0 {
					add(r.Rec, Error, "empty-text", "empty text block")
				}
			case BlockThinking, BlockRedactedThinking:
				if m.Role != "assistant" {
					add(r.Rec, Error, "thinking-in-user", "%s block in a user message", b.Type)
				}
				if b.NoSignature {
					add(r.Rec, Error, "thinking-unsigned", "thinking block without signature")
				} else if b.FakeSignature {
					add(r.Rec, Error, "thinking-fake-signature", "thinking signature is not a real signature (the API rejects it)")
				}
				if b.Empty {
					add(r.Rec, Error, "redacted-thinking-empty", "redacted_thinking block without data")
				}
			case BlockToolUse:
				if m.Role != "assistant" {
					add(r.Rec, Error, "tool-use-in-user", "tool_use %s in a user message", b.ID)
				}
				if seen[b.ID] {
					add(r.Rec, Error, "duplicate-tool-use", "duplicate tool_use id %s", b.ID)
				}
				seen[b.ID] = true
				uses[b.ID] = true
				if b.InputNotObject {
					add(r.Rec, Error, "tool-input", "tool_use %s input is not an object", b.ID)
				}
			case BlockToolResult:
				if m.Role != "user" {
					add(r.Rec, Error, "tool-result-in-assistant", "tool_result %s in an assistant message", b.ID)
				}
			}
		}
		if m.Role == "assistant" && len(uses) > 0 {
			ix.checkAnswered(msgs, k, uses, add)
		}
		if m.Role == "user" {
			ix.checkResults(msgs, k, add)
		}
	}
	return out
}

func (ix *Index) checkAnswered(msgs []Message, k int, uses map[string]bool, add func(int, Severity, string, string, ...any)) {
	got := make(map[string]bool)
	if k+1 < len(msgs) {
		for _, r := range msgs[k+1].Blocks {
			if b := ix.block(r); b.Type == BlockToolResult {
				got[b.ID] = true
			}
		}
	}
	for _, r := range msgs[k].Blocks {
		b := ix.block(r)
		if b.Type != BlockToolUse || got[b.ID] {
			continue
		}
		if k+1 == len(msgs) {
			add(r.Rec, Warning, "tool-use-in-flight", "tool_use %s (%s) at the end has no result yet: in flight, or interrupted", b.ID, b.Name)
			continue
		}
		add(r.Rec, Error, "orphan-tool-use", "tool_use %s (%s) has no tool_result in the next message", b.ID, b.Name)
	}
}

func (ix *Index) checkResults(msgs []Message, k int, add func(int, Severity, string, string, ...any)) {
	prev := make(map[string]bool)
	if k > 0 && msgs[k-1].Role == "assistant" {
		for _, r := range msgs[k-1].Blocks {
			if b := ix.block(r); b.Type == BlockToolUse {
				prev[b.ID] = true
			}
		}
	}
	other := false
	for _, r := range msgs[k].Blocks {
		b := ix.block(r)
		if b.Type != BlockToolResult {
			other = true
			continue
		}
		if !prev[b.ID] {
			add(r.Rec, Error, "orphan-tool-result", "tool_result %s has no tool_use in the previous message", b.ID)
		} else if other {
			add(r.Rec, Error, "tool-result-after-content", "tool_result %s comes after other content in its message", b.ID)
		}
	}
}
