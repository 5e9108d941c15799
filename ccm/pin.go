package ccm

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// PinLevel says how strongly a blob is protected from pruning. Levels are
// ordered: PinNone < PinSoft < PinHard.
type PinLevel int

const (
	// PinNone blobs are pruned first, by age, size or when unreferenced.
	PinNone PinLevel = iota
	// PinSoft blobs are pruned only by a size limit, after every unpinned
	// blob is gone.
	PinSoft
	// PinHard blobs are never pruned automatically.
	PinHard
)

// String returns "none", "soft" or "hard".
func (l PinLevel) String() string {
	switch l {
	case PinNone:
		return "none"
	case PinSoft:
		return "soft"
	case PinHard:
		return "hard"
	}
	return fmt.Sprintf("PinLevel(%d)", int(l))
}

// ParsePinLevel parses "none", "soft" or "hard" (any case). The empty
// string is "none", as the Python tool's metadata has it for unpinned blobs.
func ParsePinLevel(s string) (PinLevel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return PinNone, nil
	case "soft":
		return PinSoft, nil
	case "hard":
		return PinHard, nil
	}
	return PinNone, fmt.Errorf("invalid pin level %s: want none, soft or hard", quoteShort(s))
}

// MarshalText writes the level as in metadata files.
func (l PinLevel) MarshalText() ([]byte, error) {
	if l < PinNone || l > PinHard {
		return nil, fmt.Errorf("invalid pin level %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText reads a level written by MarshalText or by the Python tool.
func (l *PinLevel) UnmarshalText(b []byte) error {
	v, err := ParsePinLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Pin is the protection resolved for one item: its level and why.
type Pin struct {
	Level  PinLevel
	Reason string
}

// Directive is one "ccm:pin last|next|start|end [level=soft|hard]
// [reason="..."]" found in user-authored text.
type Directive struct {
	Kind   string // last, next, start or end, lowercase
	Level  PinLevel
	Reason string
}

// directiveRE is the Python tool's grammar, unchanged (case-insensitive;
// level defaults to soft; a level=none or any other word is not part of the
// directive, so "ccm:pin last level=none" pins soft, as it did there). It
// is compiled on first use, not in every `ccm hook` process.
var directiveRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)ccm:pin\s+(last|next|start|end)(?:\s+level=(soft|hard))?(?:\s+reason="([^"]*)")?`)
})

// ParseDirectives returns every pin directive in text, in order. The caller
// decides what text is user-authored: user prompts and slash-command
// expansions, never assistant text and never tool output, so that neither
// the model nor a file it reads can pin (or unpin) anything.
func ParseDirectives(text string) []Directive {
	if !strings.Contains(strings.ToLower(text), "ccm:pin") {
		return nil
	}
	var out []Directive
	for _, m := range directiveRE().FindAllStringSubmatch(text, -1) {
		d := Directive{Kind: strings.ToLower(m[1]), Level: PinSoft, Reason: m[3]}
		if strings.EqualFold(m[2], "hard") {
			d.Level = PinHard
		}
		out = append(out, d)
	}
	return out
}

// PinEvent is one step of a transcript in file order: either a directive or
// a large item (one the caller may store and stub), named by the caller's
// own index Item.
type PinEvent struct {
	Item        int
	IsDirective bool
	Directive   Directive
}

// ResolvePins resolves directives to the large items they target, exactly
// as the Python tool did (prior-art a.14):
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
func ResolvePins(events []PinEvent) map[int]Pin {
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
