package purge

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"ccm/ccm/pins"
	"ccm/transcript"
	"ccm/transcript/worklog"
)

// recInfo is what the plan needs to know of a record beyond its facts.
type recInfo struct {
	prompt bool // a real user prompt (not meta, not a tool result, not an interrupt marker)
	large  bool // holds content the stubbing step would move to the store
	// largeOld: the same under --old-threshold, which applies before the
	// --recent-turns window (known only once the scan is done).
	largeOld bool
	kind     bookkeeping // per-turn bookkeeping kind (0 when it is none)
}

// scan is the result of the first pass.
type scan struct {
	ix     *transcript.Index
	info   []recInfo
	events []pins.Event // pin directives and large records, in file order (Item = record index)
	micro  *microScan   // what the microcompaction rules need; nil when they are off
}

// bookkeeping is a kind of per-turn record of which only the latest is kept:
// Claude Code 2.1.3xx appends a prompt_snapshot attachment and the
// api-request-shape / api-request-blob records on every turn
// (docs/transcript-format.md, "A resume only appends"), 150 to 350 KB per
// turn. A byte, not a name: the scan keeps one per record.
type bookkeeping uint8

const (
	notBookkeeping bookkeeping = iota
	requestShape
	requestBlob
	attachedSnapshot
	attachedRequestShape
	attachedRequestBlob
)

// bookkeepingKind says which per-turn kind a record is, if any.
func bookkeepingKind(f *transcript.Facts) bookkeeping {
	switch f.TypeName() {
	case "api-request-shape":
		return requestShape
	case "api-request-blob":
		return requestBlob
	}
	if f.Type == transcript.TypeAttachment {
		switch f.Subtype() {
		case "prompt_snapshot":
			return attachedSnapshot
		case "api-request-shape":
			return attachedRequestShape
		case "api-request-blob":
			return attachedRequestBlob
		}
	}
	return notBookkeeping
}

var pinMarker = []byte("ccm:pin")

// scanFile runs the first pass over r.
func scanFile(r io.Reader, opt Options) (*scan, error) {
	s := &scan{}
	if microOn(opt) {
		s.micro = &microScan{calls: map[string]microCall{}, failed: map[string]bool{}}
	}
	visit := func(l transcript.Line, rec transcript.Record, f *transcript.Facts, sz *transcript.Sizes) error {
		if f == nil {
			return nil
		}
		i := len(s.info)
		ri := recInfo{kind: bookkeepingKind(f)}
		if f.Type == transcript.TypeUser && !f.Sidechain && !onlyToolResults(f) {
			text, onlyResults := userText(rec)
			ri.prompt = !f.Meta && !f.CompactSummary && !onlyResults && isPromptText(text)
			// Pin directives come from user-authored text only: prompts
			// and slash-command expansions (isMeta), never tool output.
			if !onlyResults && !f.CompactSummary && bytes.Contains(l.Raw, pinMarker) {
				for _, d := range pins.Parse(text) {
					d.Reason = strings.Clone(d.Reason) // text points into the line buffer
					s.events = append(s.events, pins.Event{Item: i, IsDirective: true, Directive: d})
				}
			}
		}
		if isLarge(rec, f, sz, opt) {
			ri.large = true
			s.events = append(s.events, pins.Event{Item: i})
		}
		ri.largeOld = ri.large || opt.OldThreshold > 0 && largeAt(rec, f, sz, opt, min(opt.Threshold, opt.OldThreshold))
		if s.micro != nil {
			s.micro.note(i, rec, f, opt)
		}
		s.info = append(s.info, ri)
		return nil
	}
	ix, err := transcript.Build(r, transcript.BuildOptions{Sizes: true, Visit: visit})
	if err != nil {
		return nil, err
	}
	s.ix = ix
	return s, nil
}

// onlyToolResults tells from the index that a record's content is tool
// results only: no prompt, no directive, and no need to decode its
// content (megabytes of tool output) to find that out.
func onlyToolResults(f *transcript.Facts) bool {
	if f.ContentString || f.NumBlocks() == 0 {
		return false
	}
	for _, b := range f.Blocks() {
		if b.Type != transcript.BlockToolResult {
			return false
		}
	}
	return true
}

// userText and isPromptText are the extractor's (package worklog), so a
// purge and its injected summary agree on what a prompt is.
var (
	userText     = worklog.UserText
	isPromptText = worklog.IsPromptText
)

// isLarge reports whether a record holds content the stubbing step moves.
// It must agree with planStubs: pin directives resolve to the nearest large
// record, and a record counted here that gets no stub would swallow the pin
// meant for the next stored output (a long Bash command, say, whose input
// is never stubbed).
func isLarge(rec transcript.Record, f *transcript.Facts, sz *transcript.Sizes, opt Options) bool {
	return largeAt(rec, f, sz, opt, opt.Threshold)
}

// largeAt is isLarge with thr in place of --threshold for what the
// request carries (tool results and inputs); the toolUseResult copy,
// which the client never sends, always goes by --threshold.
func largeAt(rec transcript.Record, f *transcript.Facts, sz *transcript.Sizes, opt Options, thr int) bool {
	if sz == nil {
		return false
	}
	for _, o := range sz.ToolResults {
		if o.Bytes > thr && !lostResult(o.IsError, o.Bytes) {
			return true
		}
	}
	if sz.ToolUseResult > opt.Threshold || sz.Image > opt.ImageMin {
		return true
	}
	if sz.ToolUseInput <= thr {
		return false
	}
	for b, bf := range f.Blocks() {
		if bf.Type != transcript.BlockToolUse {
			continue
		}
		for _, field := range inputFields[bf.Name] {
			if len(rec.Get("message.content."+strconv.Itoa(b)+".input."+field).Raw) > thr {
				return true
			}
		}
	}
	return false
}
