package purge

import (
	"crypto/sha256"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
)

// Microcompaction: besides content over a size threshold, purge moves to
// the store what the model no longer needs even when it is small: a Read
// of a file read again or changed later (a stale copy), the earlier copies
// of a tool output repeated byte for byte, and TodoWrite lists a later
// TodoWrite replaced. Each is stubbed exactly as large content is (the
// stored bytes are the raw JSON value, so ccm restore splices them back),
// only before the recent window, only on the active chain, and only where
// what supersedes it is on the active chain too, so the request still
// carries the newer copy.

// microMin is the smallest value a microcompaction rule stubs: a stub
// takes 200 to 400 bytes, so a smaller value would barely shrink, and a
// stub is never stubbed again (idempotence).
const microMin = 1024

// Reasons written into a microcompaction stub's desc line, so the model
// knows why the content left and that it can fetch it.
const (
	reasonStaleRead = "stale: this file was read again or changed later"
	reasonDuplicate = "duplicate: a later tool output has the same bytes"
	reasonOldTodos  = "superseded: a later TodoWrite replaced this list"
	reasonReplayed  = "replayed: a later hook gave the same context"
)

// microCall is a tool call the microcompaction rules look at.
type microCall struct {
	rec  int
	seq  int // order of the call in the file
	name string
	path string // file_path or notebook_path
	// cover is what a Read reads: "" for the whole file, else its
	// offset and limit; a later Read supersedes an earlier one when it
	// reads the whole file or the same part.
	cover string
	input int // bytes of TodoWrite's input.todos
}

// microResult is a tool result large enough for a rule to stub.
type microResult struct {
	rec  int
	id   string
	hash [16]byte
}

// microScan is what the first pass notes for the rules.
type microScan struct {
	calls   map[string]microCall // by tool_use id
	order   []string             // tool_use ids in file order
	results []microResult
	failed  map[string]bool // tool_use ids whose result is an error
	// hooks are the records of hook context the client replays on resume
	// (isMeta <system-reminder> text, hook_additional_context
	// attachments) large enough to stub, with a hash of that context.
	hooks []microResult
}

// microOn reports whether any rule is on.
func microOn(opt Options) bool {
	return !opt.RepairOnly && !opt.NoStore && (!opt.KeepStaleReads || !opt.KeepDuplicates || !opt.KeepOldTodos || !opt.KeepHookContext)
}

// note records what the rules need of one record: called by the scan in
// file order. It decodes only the inputs of the few tools the rules
// concern and hashes only tool results of at least microMin bytes.
func (m *microScan) note(i int, rec transcript.Record, f *transcript.Facts, opt Options) {
	if f.Sidechain {
		return
	}
	if !opt.KeepHookContext {
		m.noteHook(i, rec, f)
	}
	if f.ContentString {
		return
	}
	want := false
	for _, b := range f.Blocks() {
		switch {
		case b.Type == transcript.BlockToolUse && microTool(b.Name):
			want = true
		case b.Type == transcript.BlockToolResult:
			if b.IsError {
				m.failed[b.ID] = true
			}
			want = want || !opt.KeepDuplicates || !opt.KeepStaleReads
		}
	}
	if !want {
		return
	}
	content := transcript.Lookup(rawjson.String(rec.Raw()), "message")
	if !content.IsObject() {
		return
	}
	content = transcript.Lookup(content.Raw, "content")
	if !content.IsArray() {
		return
	}
	transcript.ForEachElement(content, func(blk gjson.Result) bool {
		switch transcript.Lookup(blk.Raw, "type").Raw {
		case `"tool_use"`:
			name := blk.Get("name").Str
			if !microTool(name) {
				return true
			}
			id := strings.Clone(blk.Get("id").Str)
			in := transcript.Lookup(blk.Raw, "input")
			c := microCall{rec: i, seq: len(m.order), name: strings.Clone(name)}
			if name == "TodoWrite" {
				c.input = len(transcript.Lookup(in.Raw, "todos").Raw)
			} else {
				g := gjson.Parse(in.Raw)
				c.path = strings.Clone(g.Get("file_path").Str)
				if c.path == "" {
					c.path = strings.Clone(g.Get("notebook_path").Str)
				}
				if name == "Read" {
					c.cover = strings.Clone(g.Get("offset").Raw + "/" + g.Get("limit").Raw + "/" + g.Get("pages").Raw)
					if c.cover == "//" {
						c.cover = ""
					}
				}
			}
			if _, dup := m.calls[id]; !dup && id != "" {
				m.calls[id] = c
				m.order = append(m.order, id)
			}
		case `"tool_result"`:
			inner := transcript.Lookup(blk.Raw, "content")
			// Over --threshold a result is stubbed wherever a rule could
			// stub it, and the store keeps equal values once: hashing it
			// (most of a transcript's bytes) would buy nothing.
			if len(inner.Raw) < microMin || len(inner.Raw) > opt.Threshold || strings.Contains(inner.Raw[:min(len(inner.Raw), stubSearch)], stub.Start) {
				return true
			}
			sum := sha256.Sum256([]byte(inner.Raw))
			var h [16]byte
			copy(h[:], sum[:16])
			m.results = append(m.results, microResult{rec: i, id: strings.Clone(blk.Get("tool_use_id").Str), hash: h})
		}
		return true
	})
}

// microTool names the tools whose calls the rules follow.
func microTool(name string) bool {
	switch name {
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "TodoWrite":
		return true
	}
	return false
}

// planMicro decides the microcompaction stubs: p.microResults (tool
// results by record and tool_use_id) and p.microInputs (TodoWrite inputs
// by record and tool_use id), each with the reason its stub gives.
func (p *Plan) planMicro() {
	m := p.scan.micro
	if m == nil || !microOn(p.opt) {
		return
	}
	on := p.scan.ix.ActiveChain().On
	// eligible: before the window, on the chain, kept, not the latest
	// assistant message's.
	eligible := func(rec int) bool {
		return rec < p.windowStart && on[rec] && p.drop[rec] == keep && !p.latestRecs[rec] && !p.rec(rec).CompactSummary
	}
	mark := func(set map[int]map[string]string, rec int, id, why string) bool {
		if set[rec] == nil {
			set[rec] = map[string]string{}
		}
		if _, had := set[rec][id]; had {
			return false
		}
		set[rec][id] = why
		p.scan.info[rec].large = true
		return true
	}
	resultOf := map[string]int{}
	for k, r := range m.results {
		resultOf[r.id] = k
	}
	if !p.opt.KeepStaleReads {
		// The last call on each path decides nothing; walk backwards so
		// every Read knows whether a later call on its path supersedes it.
		later := map[string][]microCall{}
		for k := len(m.order) - 1; k >= 0; k-- {
			id := m.order[k]
			c := m.calls[id]
			if c.path == "" || !on[c.rec] {
				continue
			}
			if c.name == "Read" {
				if k2, ok := resultOf[id]; ok && supersedes(later[c.path], c) {
					r := m.results[k2]
					if eligible(r.rec) && mark(p.microResults, r.rec, id, reasonStaleRead) {
						p.Stats.StaleReads++
					}
				}
			}
			if !m.failed[id] && c.name != "TodoWrite" {
				later[c.path] = append(later[c.path], c)
			}
		}
	}
	if !p.opt.KeepDuplicates {
		seen := map[[16]byte]bool{}
		for k := len(m.results) - 1; k >= 0; k-- {
			r := m.results[k]
			if !on[r.rec] {
				continue
			}
			if seen[r.hash] {
				if _, stale := p.microResults[r.rec][r.id]; !stale && eligible(r.rec) && mark(p.microResults, r.rec, r.id, reasonDuplicate) {
					p.Stats.DuplicateOutputs++
				}
			}
			seen[r.hash] = true
		}
	}
	if !p.opt.KeepHookContext {
		p.planHooks(on, eligible)
	}
	if !p.opt.KeepOldTodos {
		last := true
		for k := len(m.order) - 1; k >= 0; k-- {
			c := m.calls[m.order[k]]
			if c.name != "TodoWrite" || !on[c.rec] {
				continue
			}
			if !last && c.input >= microMin && eligible(c.rec) && mark(p.microInputs, c.rec, m.order[k], reasonOldTodos) {
				p.Stats.OldTodos++
			}
			last = false
		}
	}
}

// supersedes reports whether one of the later calls on a Read's file
// makes the Read's copy stale: a change to the file, or a Read of the
// whole file or of the same part of it.
func supersedes(later []microCall, read microCall) bool {
	for _, c := range later {
		if c.seq <= read.seq {
			continue
		}
		if c.name != "Read" || c.cover == "" || c.cover == read.cover {
			return true
		}
	}
	return false
}

// microFor returns the reason a block of a record is stubbed by a
// microcompaction rule, and whether it is.
func microFor(set map[int]map[string]string, rec int, id string) (string, bool) {
	why, ok := set[rec][id]
	return why, ok
}

// reminderStart is how hook context that Claude Code 2.1.3x stored as an
// isMeta user text begins (raw, in the line).
const reminderStart = `"<system-reminder>`

// noteHook notes a record of replayed hook context: an isMeta user record
// whose content is a <system-reminder> string, or a hook_additional_context
// attachment with a string of at least microMin bytes.
func (m *microScan) noteHook(i int, rec transcript.Record, f *transcript.Facts) {
	var v gjson.Result
	switch {
	case f.Type == transcript.TypeUser && f.Meta && f.ContentString:
		msg := transcript.Lookup(rawjson.String(rec.Raw()), "message")
		if !msg.IsObject() {
			return
		}
		v = transcript.Lookup(msg.Raw, "content")
		if len(v.Raw) < microMin || !strings.HasPrefix(v.Raw, reminderStart) {
			return
		}
	case f.Type == transcript.TypeAttachment && f.Subtype() == "hook_additional_context":
		att := transcript.Lookup(rawjson.String(rec.Raw()), "attachment")
		if !att.IsObject() {
			return
		}
		v = transcript.Lookup(att.Raw, "content")
		large := false
		if v.IsArray() {
			transcript.ForEachElement(v, func(e gjson.Result) bool {
				large = e.Type == gjson.String && len(e.Raw) >= microMin
				return !large
			})
		}
		if !large {
			return
		}
	default:
		return
	}
	if strings.Contains(v.Raw[:min(len(v.Raw), stubSearch)], stub.Start) {
		return
	}
	sum := sha256.Sum256([]byte(v.Raw))
	var h [16]byte
	copy(h[:], sum[:16])
	m.hooks = append(m.hooks, microResult{rec: i, hash: h})
}

// planHooks marks every record of hook context but the last with the
// same bytes (on the active chain).
func (p *Plan) planHooks(on []bool, eligible func(int) bool) {
	seen := map[[16]byte]bool{}
	hooks := p.scan.micro.hooks
	for k := len(hooks) - 1; k >= 0; k-- {
		h := hooks[k]
		if !on[h.rec] {
			continue
		}
		if seen[h.hash] && eligible(h.rec) {
			p.microHooks[h.rec] = reasonReplayed
			p.scan.info[h.rec].large = true
			p.Stats.ReplayedHooks++
		}
		seen[h.hash] = true
	}
}

// stubHook stubs the hook context of a record planHooks marked: the
// isMeta text, or each large string of the attachment's content and the
// text the client rendered from it. Arrays stay arrays: the client reads
// them as such.
func stubHook(f *transcript.Facts, content, att, rendered gjson.Result, stub func(v gjson.Result)) {
	if f.Type == transcript.TypeUser {
		if content.Type == gjson.String && len(content.Raw) >= microMin {
			stub(content)
		}
		return
	}
	if c := lookupIn(att, "content"); c.IsArray() {
		transcript.ForEachElement(c, func(e gjson.Result) bool {
			if e.Type == gjson.String && len(e.Raw) >= microMin {
				stub(e)
			}
			return true
		})
	}
	if rendered.IsArray() {
		transcript.ForEachElement(rendered, func(r gjson.Result) bool {
			if c := lookupIn(r, "content"); c.Type == gjson.String && len(c.Raw) >= microMin {
				stub(c)
			}
			return true
		})
	}
}
