package purge

import (
	"fmt"
	"sort"
	"strings"

	"ccm/transcript"
)

// Step is one decision of a purge's plan, as `ccm purge --dry-run` prints
// it: what happens, where (the line of the original file, and the value
// or blocks in it), and why.
type Step struct {
	Line   int    `json:"line"`            // 1-based line of the original file the step is about
	Action string `json:"action"`          // drop, relink, remove, rename, stub, add, insert, archive, newline
	Where  string `json:"where,omitempty"` // a value's path in the record, or which blocks
	Why    string `json:"why"`
	Key    string `json:"key,omitempty"`   // the store key a stub names
	Bytes  int64  `json:"bytes,omitempty"` // what a stub moves to the store
}

// dropWhy says why a record is dropped.
var dropWhy = [...]string{
	dropThinking:     "it held only thinking of an earlier turn, which the API drops",
	dropProgress:     "progress record: the client never sends it",
	dropBookkeeping:  "per-turn bookkeeping record: a later one of its kind is kept",
	dropEmpty:        "empty content on the chain: the API rejects it",
	dropOrphanResult: "its only blocks were results of calls that are not in the file",
	dropArchived:     "before the last compact boundary: archived in one blob (--archive-compacted)",
}

// Steps lists every decision of the plan in file order: the archived
// region, dropped records, relinked parents, removed blocks, renamed tool
// ids, stubs with their keys, records added, the injected compaction and
// the final newline.
func (p *Plan) Steps() []Step {
	n := p.scan.ix.Len()
	var out []Step
	if a := p.archive; a != nil {
		out = append(out, Step{Line: 1, Action: "archive", Where: fmt.Sprintf("lines 1-%d", a.lines),
			Why: fmt.Sprintf("before the last compact boundary (line %d): stored as one blob, replaced by one archive record", p.rec(a.boundary).Line)})
	}
	for i := 0; i < n; i++ {
		f := p.rec(i)
		if d := p.drop[i]; d != keep {
			if d != dropArchived {
				out = append(out, Step{Line: int(f.Line), Action: "drop", Why: dropWhy[d]})
			}
			continue
		}
		if inj := p.inject; inj != nil && i == inj.before {
			out = append(out, Step{Line: int(f.Line), Action: "insert", Why: "a compaction summary of everything before this record (--inject-compaction)"})
		}
		if r, ok := p.parent[i]; ok {
			to, why := "null", r.why
			if r.to != "" {
				to = r.to
				if j, ok := p.scan.ix.Lookup(to); ok {
					to += fmt.Sprintf(" (line %d)", p.rec(j).Line)
				} else {
					to += " (a record the purge adds)"
				}
			}
			out = append(out, Step{Line: int(f.Line), Action: "relink", Where: "parentUuid -> " + to, Why: why})
		}
		if rm := p.remove[i]; rm != nil {
			out = append(out, p.removeSteps(i, rm)...)
		}
		if rn := p.renames[i]; rn != nil {
			blocks := make([]int, 0, len(rn))
			for b := range rn {
				blocks = append(blocks, b)
			}
			sort.Ints(blocks)
			for _, b := range blocks {
				out = append(out, Step{Line: int(f.Line), Action: "rename", Where: fmt.Sprintf("message.content[%d] id -> %s", b, rn[b]),
					Why: "an earlier tool call has the same id: the API rejects duplicates"})
			}
		}
		if sr := p.stubs[i]; sr != nil {
			for _, ps := range sr.stubs {
				out = append(out, Step{Line: int(f.Line), Action: "stub", Where: ps.where, Why: ps.why, Key: ps.key.String(), Bytes: int64(ps.n)})
			}
		}
		if s := p.synth[i]; s != nil {
			out = append(out, Step{Line: int(f.Line), Action: "add", Where: "after this line: tool results for " + strings.Join(s.IDs, ", "),
				Why: "these calls have no result: the API rejects a call without one"})
		}
	}
	if p.terminate {
		out = append(out, Step{Line: int(p.rec(n - 1).Line), Action: "newline", Why: "the last record has no newline: the next line Claude Code appends would be glued to it"})
	}
	return out
}

// removeSteps words the blocks removed from record i, one step per reason.
func (p *Plan) removeSteps(i int, rm []bool) []Step {
	f := p.rec(i)
	byWhy := map[string][]int{}
	var order []string
	for b, gone := range rm {
		if !gone || b >= f.NumBlocks() {
			continue
		}
		why := removeWhy(f, b)
		if _, seen := byWhy[why]; !seen {
			order = append(order, why)
		}
		byWhy[why] = append(byWhy[why], b)
	}
	out := make([]Step, 0, len(order))
	for _, why := range order {
		bs := byWhy[why]
		idx := make([]string, len(bs))
		for k, b := range bs {
			idx[k] = fmt.Sprint(b)
		}
		out = append(out, Step{Line: int(f.Line), Action: "remove", Where: "message.content[" + strings.Join(idx, ",") + "]", Why: why})
	}
	return out
}

// removeWhy says why block b of a record is removed.
func removeWhy(f *transcript.Facts, b int) string {
	bf := f.Block(b)
	switch bf.Type {
	case transcript.BlockThinking, transcript.BlockRedactedThinking:
		if bf.Type == transcript.BlockThinking && (bf.NoSignature || bf.FakeSignature) || bf.Type == transcript.BlockRedactedThinking && bf.Empty {
			return "thinking without a real signature, or redacted thinking without data: the API rejects it"
		}
		return "thinking of an earlier turn: the API drops it"
	case transcript.BlockToolResult:
		return "result of a call that is not in the file"
	case transcript.BlockText:
		return "empty text block: the API rejects it"
	}
	return "empty block: the API rejects it"
}
