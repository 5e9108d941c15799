package purge

import (
	"crypto/sha256"
	"fmt"

	"ccm/ccm/pins"
	"ccm/transcript"
)

// dropReason says why a record is left out of the new file.
type dropReason uint8

const (
	keep dropReason = iota
	dropThinking
	dropProgress
	dropBookkeeping
	dropEmpty        // repair: a record with empty content on the chain
	dropOrphanResult // repair: a record whose only blocks were orphan tool results
	dropArchived     // --archive-compacted: before the last compact boundary
)

// synthResult is a tool_result record the plan adds after an assistant
// message whose tool calls have no result.
type synthResult struct {
	After  int    // the record (original index) it follows
	UUID   string // its uuid
	Parent string // the uuid of After
	IDs    []string
}

// Plan is every decision of a purge, made before anything is written.
type Plan struct {
	scan *scan
	opt  Options

	drop   []dropReason
	parent map[int]relink // new parentUuid of a record, with the reason
	remove map[int][]bool // blocks to remove from a record
	synth  map[int]*synthResult
	pins   map[int]pins.Pin

	windowStart int // records at or after this index are in the recent window
	turnsStart  int // the --recent-turns window's start, where --old-threshold ends
	// microResults and microInputs are the microcompaction stubs: tool
	// results (record → tool_use_id) and TodoWrite inputs (record → tool_use
	// id), each with its reason.
	microResults, microInputs map[int]map[string]string
	microHooks                map[int]string // records of replayed hook context, with the reason
	latest                    string         // message.id of the latest assistant message
	// latestRecs are the records of the latest assistant message on the
	// chain, which identify it even when its records carry no message.id.
	latestRecs map[int]bool
	inject     *injection
	archive    *archive
	// renames gives a new id to blocks (record → block → id): the later
	// of two tool calls sharing an id, and the result that answers it.
	renames map[int]map[int]string
	// stubs are the values that move to the store, by record, decided by
	// decideStubs once the rest of the plan is made.
	stubs map[int]*stubbedRecord
	// terminate: the last record has no newline, and gets one.
	terminate bool

	Stats Stats
}

// Stats counts what a purge changes.
type Stats struct {
	ThinkingRemoved       int    `json:"thinking_blocks_removed"`
	DroppedThinking       int    `json:"records_dropped_thinking"`
	DroppedProgress       int    `json:"records_dropped_progress"`
	DroppedBookkeeping    int    `json:"records_dropped_bookkeeping"`
	DroppedArchived       int    `json:"records_archived"`
	RelinkedDangling      int    `json:"repaired_dangling_parents"`
	RootedDangling        int    `json:"repaired_dangling_roots"`
	BrokenCycles          int    `json:"repaired_parent_cycles"`
	AddedNewline          bool   `json:"final_newline_added,omitempty"`
	SynthesizedResults    int    `json:"repaired_missing_tool_results"`
	RemovedOrphanResult   int    `json:"repaired_orphan_tool_results"`
	DroppedEmpty          int    `json:"repaired_empty_records"`
	RemovedEmptyText      int    `json:"repaired_empty_text_blocks"`
	RemovedBrokenThinking int    `json:"repaired_unsigned_thinking"` // no signature, or a placeholder
	RenamedDuplicateIDs   int    `json:"repaired_duplicate_tool_ids"`
	Reparented            int    `json:"records_reparented"`
	Stubs                 int    `json:"stubs_written"`
	StaleReads            int    `json:"stubbed_stale_reads"`
	DuplicateOutputs      int    `json:"stubbed_duplicate_outputs"`
	OldTodos              int    `json:"stubbed_old_todos"`
	ReplayedHooks         int    `json:"stubbed_replayed_hook_context"`
	StubbedBytes          int64  `json:"bytes_moved_to_store"`
	Injected              bool   `json:"compaction_injected,omitempty"`
	InjectSkipped         string `json:"compaction_not_injected,omitempty"`
	ArchivedLines         int    `json:"lines_archived,omitempty"`
	ArchiveSkipped        string `json:"archive_skipped,omitempty"`
}

// makePlan decides the purge of a scanned transcript.
func makePlan(s *scan, opt Options, subagent bool) *Plan {
	n := s.ix.Len()
	p := &Plan{scan: s, opt: opt, drop: make([]dropReason, n), parent: map[int]relink{},
		remove: map[int][]bool{}, synth: map[int]*synthResult{}, renames: map[int]map[int]string{},
		microResults: map[int]map[string]string{}, microInputs: map[int]map[string]string{}, microHooks: map[int]string{}}
	p.latest = p.findLatest()
	p.latestRecs = p.findLatestRecs()
	p.turnsStart = p.findWindow()
	p.windowStart = p.boundWindow(p.turnsStart)
	if !opt.RepairOnly && opt.ArchiveCompacted {
		if opt.NoStore {
			p.Stats.ArchiveSkipped = "--no-ccm keeps everything in place"
		} else {
			p.planArchive()
		}
	}
	if !opt.RepairOnly {
		if !opt.KeepThinking {
			p.planThinking()
		}
		if !opt.KeepProgress {
			p.planProgress()
		}
		if !opt.KeepBookkeeping {
			p.planBookkeeping()
		}
	}
	// Subagent files name parents in the main session on purpose.
	if !subagent {
		p.planDangling()
	}
	p.planCycles()
	if !opt.RepairOnly && opt.InjectCompaction {
		p.planInjection()
	}
	p.planToolPairs()
	if !opt.RepairOnly {
		p.planMicro()
		p.settleLarge()
		p.pins = pins.Resolve(s.events)
	}
	// What only the plan needed of the scan goes now, before the stub
	// decisions and the write pass: on a 1 GB transcript the
	// microcompaction's tool calls and the pin events are about 7 MB.
	s.micro, s.events = nil, nil
	return p
}

// rec returns the facts of record i of the file.
func (p *Plan) rec(i int) *transcript.Facts { return p.scan.ix.Rec(i) }

// kept counts the records the plan keeps.
func (p *Plan) kept() int {
	n := 0
	for _, d := range p.drop {
		if d == keep {
			n++
		}
	}
	return n
}

// findWindow returns the index of the Nth-last real user prompt; records
// from there on are the recent window. With fewer prompts, everything is.
func (p *Plan) findWindow() int {
	if p.opt.RecentTurns <= 0 {
		return p.scan.ix.Len()
	}
	seen := 0
	for i := p.scan.ix.Len() - 1; i >= 0; i-- {
		if p.scan.info[i].prompt {
			seen++
			if seen == p.opt.RecentTurns {
				return i
			}
		}
	}
	return 0
}

// findLatest returns the message.id of the latest assistant message: the
// last one on the active chain, else the last in the file. Its thinking
// must stay byte-identical (the API rejects a modified latest thinking).
func (p *Plan) findLatest() string {
	ix := p.scan.ix
	c := ix.ActiveChain()
	for k := len(c.Recs) - 1; k >= 0; k-- {
		if f := ix.Rec(c.Recs[k]); f.Type == transcript.TypeAssistant && !f.APIError {
			return f.MsgID()
		}
	}
	for i := ix.Len() - 1; i >= 0; i-- {
		if f := ix.Rec(i); f.Type == transcript.TypeAssistant && !f.Sidechain {
			return f.MsgID()
		}
	}
	return ""
}

// findLatestRecs returns the records of the latest assistant message of
// the active chain as the API sees it (consecutive assistant records
// merged).
func (p *Plan) findLatestRecs() map[int]bool {
	ix := p.scan.ix
	c := ix.ActiveChain()
	msgs := ix.Messages(c)
	out := map[int]bool{}
	for k := len(msgs) - 1; k >= 0; k-- {
		if msgs[k].Role == "assistant" {
			for _, r := range msgs[k].Recs {
				out[r] = true
			}
			break
		}
	}
	return out
}

// planThinking removes thinking and redacted_thinking blocks from every
// assistant message except the latest; a record left without blocks is
// dropped (its children are relinked to its parent).
func (p *Plan) planThinking() {
	for i := range p.scan.ix.Len() {
		f := p.rec(i)
		if f.Type != transcript.TypeAssistant || f.MsgID() == p.latest && p.latest != "" || p.latestRecs[i] || p.drop[i] != keep {
			continue
		}
		for b, bf := range f.Blocks() {
			if bf.Type == transcript.BlockThinking || bf.Type == transcript.BlockRedactedThinking {
				p.removeBlock(i, b)
				p.Stats.ThinkingRemoved++
			}
		}
		if p.allRemoved(i) {
			p.setDrop(i, dropThinking)
		}
	}
}

// planProgress drops progress records. In a live session those of the
// current turn (from the last prompt on) stay: the running Claude Code may
// still name them as parents of the records it appends next, and those
// appends are copied verbatim.
func (p *Plan) planProgress() {
	end := p.scan.ix.Len()
	if p.opt.Live {
		end = p.lastPrompt()
	}
	for i := 0; i < end; i++ {
		if p.rec(i).Type == transcript.TypeProgress {
			p.setDrop(i, dropProgress)
		}
	}
}

// lastPrompt returns the index of the last real user prompt (0 if none).
func (p *Plan) lastPrompt() int {
	for i := len(p.scan.info) - 1; i >= 0; i-- {
		if p.scan.info[i].prompt {
			return i
		}
	}
	return 0
}

// planBookkeeping keeps only the latest record of each per-turn
// bookkeeping kind. System-rendered attachments (environment, date, …)
// are never of such a kind, so the one the client needs stays.
func (p *Plan) planBookkeeping() {
	var latest [attachedRequestBlob + 1]int
	for i, ri := range p.scan.info {
		if ri.kind != notBookkeeping {
			latest[ri.kind] = i
		}
	}
	for i, ri := range p.scan.info {
		if ri.kind != notBookkeeping && latest[ri.kind] != i {
			p.setDrop(i, dropBookkeeping)
		}
	}
}

func (p *Plan) setDrop(i int, why dropReason) {
	if p.drop[i] != keep {
		return
	}
	p.drop[i] = why
	switch why {
	case dropThinking:
		p.Stats.DroppedThinking++
	case dropProgress:
		p.Stats.DroppedProgress++
	case dropBookkeeping:
		p.Stats.DroppedBookkeeping++
	case dropEmpty:
		p.Stats.DroppedEmpty++
	case dropArchived:
		p.Stats.DroppedArchived++
	}
}

func (p *Plan) removeBlock(i, b int) {
	rm := p.remove[i]
	if rm == nil {
		rm = make([]bool, p.rec(i).NumBlocks())
		p.remove[i] = rm
	}
	rm[b] = true
}

// allRemoved reports a record whose every block is planned for removal.
func (p *Plan) allRemoved(i int) bool {
	rm := p.remove[i]
	if rm == nil || len(rm) == 0 {
		return false
	}
	for _, r := range rm {
		if !r {
			return false
		}
	}
	return true
}

// effectiveParent is a record's parentUuid after planned relinks ("" for null).
func (p *Plan) effectiveParent(i int) string {
	if r, ok := p.parent[i]; ok {
		return r.to
	}
	return p.rec(i).Parent()
}

// setParent plans a record's new parentUuid (to, "" for null), with the
// reason the printed plan gives.
func (p *Plan) setParent(i int, to, why string) {
	p.parent[i] = relink{to: to, why: why}
}

// relink is a planned parentUuid: to ("" for null), and why.
type relink struct{ to, why string }

// keptAncestor follows parents from uuid through dropped records to the
// nearest kept one. It returns the uuid to link to ("" for null) and
// whether that uuid names a record in the file.
func (p *Plan) keptAncestor(uuid string) (string, bool) {
	ix := p.scan.ix
	for steps := 0; uuid != "" && steps <= p.scan.ix.Len(); steps++ {
		j, ok := ix.Lookup(uuid)
		if !ok {
			return uuid, false
		}
		if p.drop[j] == keep {
			return uuid, true
		}
		uuid = p.effectiveParent(j)
	}
	return uuid, uuid == ""
}

// relinkChildren points every kept record whose parent is dropped at the
// nearest kept ancestor, so the resume walk stays whole.
func (p *Plan) relinkChildren() {
	ix := p.scan.ix
	for i := range p.scan.ix.Len() {
		if p.drop[i] != keep {
			continue
		}
		par := p.effectiveParent(i)
		if par == "" {
			continue
		}
		j, ok := ix.Lookup(par)
		if !ok || p.drop[j] == keep {
			continue
		}
		anc, _ := p.keptAncestor(par)
		if _, had := p.parent[i]; !had {
			p.Stats.Reparented++
		}
		if anc == "" {
			p.setParent(i, "", "every ancestor is dropped: made a root")
		} else {
			a := anc
			p.setParent(i, a, "its parent is dropped: linked to the nearest kept ancestor")
		}
	}
}

// newUUID derives a uuid (version 4 layout) from its inputs, so that the
// same repair of the same file always writes the same record.
func newUUID(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
