package transcript

import (
	"fmt"
	"sort"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Subagent marks a subagent transcript, whose records may name parents
	// in the main session's file: those are expected, not errors.
	Subagent bool
}

// Check reports what would break or silently shorten a resume of this
// transcript. Errors: a Messages API rule broken on the active chain
// (placeholder thinking signatures included: the API rejects them), a
// parentUuid naming a missing record. Warnings: torn, invalid and NUL
// lines, duplicate uuids, conversation records off the active chain, a
// last tool call still without a result.
func Check(ix *Index, opt CheckOptions) []Finding {
	c := ix.ActiveChain()
	out := ix.CheckAPI(c, ix.Messages(c))
	if !opt.Subagent {
		first := ix.firstLinkable()
		for _, i := range ix.Dangling() {
			f := ix.Rec(i)
			if i <= first[f.Sidechain] {
				// Nothing comes before it: the session starts mid-way
				// (a copy of a later part), and the walk loses nothing.
				out = append(out, Finding{Line: int(f.Line), Severity: Warning, Code: "starts-midway",
					Text: fmt.Sprintf("parentUuid %s names no record in the file, and no record comes before this one: the session starts mid-way; nothing is lost (ccm purge makes it a root)", f.Parent())})
				continue
			}
			what := "resume loses every earlier record of this branch"
			if i == c.BrokenAt {
				what = "resume stops here and drops all history before this line"
			}
			out = append(out, Finding{Line: int(f.Line), Severity: Error, Code: "dangling-parent",
				Text: fmt.Sprintf("parentUuid %s names no record in the file: %s", f.Parent(), what)})
		}
	}
	if c.Start < 0 && ix.Len() > 0 {
		out = append(out, Finding{Line: int(ix.Rec(0).Line), Severity: Warning, Code: "no-conversation",
			Text: "no user or assistant record: there is no conversation to resume (Claude Code says \"No conversation found\")"})
	}
	if c.Cycle {
		out = append(out, Finding{Line: int(ix.Rec(c.Recs[0]).Line), Severity: Error, Code: "parent-cycle",
			Text: "the parentUuid chain loops back on itself"})
	}
	for _, b := range ix.Bad {
		switch b.Kind {
		case Invalid:
			text := "line is not valid JSON (Claude Code skips it)"
			if b.NotObject {
				text = "line is JSON but not an object (Claude Code skips it)"
			}
			out = append(out, Finding{Line: b.Line, Severity: Warning, Code: "invalid-line", Text: text})
		case Torn:
			out = append(out, Finding{Line: b.Line, Severity: Warning, Code: "torn-line", Text: "last line is cut off (no newline, incomplete JSON); Claude Code skips it"})
		case NUL:
			out = append(out, Finding{Line: b.Line, Severity: Warning, Code: "nul-padding", Text: "run of NUL bytes from an interrupted write; Claude Code skips it"})
		}
	}
	if skipped := ix.Invalid + ix.Torn + ix.NULs - countBad(ix.Bad); skipped > 0 {
		out = append(out, Finding{Line: ix.Lines, Severity: Warning, Code: "bad-lines", Text: fmt.Sprintf("%d more bad lines not listed", skipped)})
	}
	for _, i := range ix.Dups {
		f := ix.Rec(i)
		first, _ := ix.Lookup(f.UUID())
		out = append(out, Finding{Line: int(f.Line), Severity: Warning, Code: "duplicate-uuid",
			Text: fmt.Sprintf("uuid %s already used at line %d", f.UUID(), ix.Rec(first).Line)})
	}
	off := ix.OffChainRecords(c)
	offWarn := func(recs []int, what string) {
		if len(recs) > 0 {
			out = append(out, Finding{Line: int(ix.Rec(recs[0]).Line), Severity: Warning, Code: "off-chain",
				Text: fmt.Sprintf("%d user/assistant records %s are not sent on resume (first here)", len(recs), what)})
		}
	}
	switch {
	case c.BrokenAt < 0:
		offWarn(off.BeforeBoundary, "before the last compact boundary")
	case !opt.Subagent:
		offWarn(off.BeforeBoundary, "before the chain break")
	}
	offWarn(off.OtherBranch, "on other branches (rewinds, retries)")
	sort.SliceStable(out, func(a, b int) bool { return out[a].Line < out[b].Line })
	return out
}

// firstLinkable returns, for the main chain (false) and sidechains
// (true), the index of the first user, assistant or system record with a
// uuid: the first record a dangling parent could be relinked to, as
// ccm purge relinks (len(Recs) when there is none).
func (ix *Index) firstLinkable() map[bool]int {
	first := map[bool]int{false: ix.Len(), true: ix.Len()}
	for i := range ix.Len() {
		f := ix.Rec(i)
		if !f.HasUUID || first[f.Sidechain] < i {
			continue
		}
		switch f.Type {
		case TypeUser, TypeAssistant, TypeSystem:
			first[f.Sidechain] = i
		}
	}
	return first
}

func countBad(bad []BadLine) int {
	n := 0
	for _, b := range bad {
		if b.Kind != Blank {
			n++
		}
	}
	return n
}

// Errors counts the findings of Error severity.
func Errors(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Severity == Error {
			n++
		}
	}
	return n
}
