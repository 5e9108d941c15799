// Package pins reads the ccm:pin directives users write into their
// prompts and resolves them to the large items (tool outputs, images) a
// purge or the capture hook stores: which item each directive protects,
// at which level and why. The grammar and the rules are claude-context-manager's.
package pins

import (
	"regexp"
	"strings"
	"sync"

	"ccm/ccm"
)

// Pin is the protection resolved for one item: its level and why.
type Pin struct {
	Level  ccm.PinLevel
	Reason string
}

// Directive is one "ccm:pin last|next|start|end [level=soft|hard]
// [reason="..."]" found in user-authored text.
type Directive struct {
	Kind   string // last, next, start or end, lowercase
	Level  ccm.PinLevel
	Reason string
}

// directiveRE is claude-context-manager's grammar, unchanged (case-insensitive;
// level defaults to soft; a level=none or any other word is not part of the
// directive, so "ccm:pin last level=none" pins soft, as it did there). It
// is compiled on first use, not in every `ccm hook` process.
var directiveRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)ccm:pin\s+(last|next|start|end)(?:\s+level=(soft|hard))?(?:\s+reason="([^"]*)")?`)
})

// Parse returns every pin directive in text, in order. The caller
// decides what text is user-authored: user prompts and slash-command
// expansions, never assistant text and never tool output, so that neither
// the model nor a file it reads can pin (or unpin) anything.
func Parse(text string) []Directive {
	if !strings.Contains(strings.ToLower(text), "ccm:pin") {
		return nil
	}
	var out []Directive
	for _, m := range directiveRE().FindAllStringSubmatch(text, -1) {
		d := Directive{Kind: strings.ToLower(m[1]), Level: ccm.PinSoft, Reason: m[3]}
		if strings.EqualFold(m[2], "hard") {
			d.Level = ccm.PinHard
		}
		out = append(out, d)
	}
	return out
}

// Event is one step of a transcript in file order: either a directive or
// a large item (one the caller may store and stub), named by the caller's
// own index Item.
type Event struct {
	Item        int
	IsDirective bool
	Directive   Directive
}

// Resolve resolves directives to the large items they target, exactly
// as claude-context-manager did (docs/earlier-tools.md, "Pin directives"):
//
//   - last: the nearest large item strictly before the directive;
//   - next: the first large item strictly after it;
//   - start opens a range (a second start replaces the first); end pins
//     every large item strictly between them with the start's level and
//     reason; an end without an open start, or a start never closed, pins
//     nothing;
//   - a later directive overrides an earlier one on the same item.
//
// Directives and items come from different records in practice (user text
// and tool results), so "strictly before/after" is simply event order.
func Resolve(events []Event) map[int]Pin {
	out := make(map[int]Pin)
	var items []int // large items seen so far, in order
	var pendingNext []Directive
	var open *Directive
	var rangeItems []int // items seen since the open start
	for _, ev := range events {
		if !ev.IsDirective {
			for _, d := range pendingNext {
				out[ev.Item] = Pin{Level: d.Level, Reason: d.Reason}
			}
			pendingNext = pendingNext[:0]
			items = append(items, ev.Item)
			if open != nil {
				rangeItems = append(rangeItems, ev.Item)
			}
			continue
		}
		d := ev.Directive
		switch strings.ToLower(d.Kind) {
		case "last":
			if len(items) > 0 {
				out[items[len(items)-1]] = Pin{Level: d.Level, Reason: d.Reason}
			}
		case "next":
			pendingNext = append(pendingNext, d)
		case "start":
			dd := d
			open, rangeItems = &dd, nil
		case "end":
			if open != nil {
				for _, it := range rangeItems {
					out[it] = Pin{Level: open.Level, Reason: open.Reason}
				}
			}
			open, rangeItems = nil, nil
		}
	}
	return out
}
