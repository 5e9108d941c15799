package purge

import (
	"strings"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
)

// stubSearch is how far into a value a stub's start marker is looked for:
// a stub is the whole value, after white space at most.
const stubSearch = 4 << 10

// isStub reports whether v, a raw value, is a string that is a stub.
func isStub(v gjson.Result) bool {
	return v.Type == gjson.String && strings.Contains(v.Raw[:min(len(v.Raw), stubSearch)], stub.Start) && stub.Is(gjson.Parse(v.Raw).Str)
}

// holdsStub reports whether v is a stub or holds one at any depth.
func holdsStub(v gjson.Result) bool {
	found := false
	switch {
	case v.IsObject():
		transcript.ForEachMember(v, func(_ string, m gjson.Result) bool {
			found = holdsStub(m)
			return !found
		})
	case v.IsArray():
		transcript.ForEachElement(v, func(e gjson.Result) bool {
			found = holdsStub(e)
			return !found
		})
	default:
		found = isStub(v)
	}
	return found
}

// pinFor returns the pin of a record's stubs: a ccm:pin directive's, or
// the default level.
func (p *Plan) pinFor(rec int) (ccm.PinLevel, string) {
	if pin, ok := p.pins[rec]; ok {
		return pin.Level, pin.Reason
	}
	return p.opt.PinDefault, ""
}

// copyPart is a value to cut out of a toolUseResult, and its path there.
type copyPart struct {
	v    gjson.Result
	name string
}

// stubRoom is what a stub takes in a line, at most, for copyParts'
// arithmetic: a key, a source line (a command is cut short) and the
// counts.
const stubRoom = 1 << 10

// copyParts picks what to cut out of a large toolUseResult: its large
// members (recursively) rather than the whole object. Claude Code keeps
// the tool's output there a second time, and often byte for byte as the
// tool_result holds it (Bash's stdout, Write's content, Task's content):
// cut out alone, such a copy has the same bytes as the value already cut
// from the result or the tool_use input, so the same key, and the store
// keeps and compresses it once. The object keeps its shape and its small
// fields. The whole value is cut when it is no object, or when what its
// large members leave would still be over the threshold; never an object
// that holds a stub already (a purged file purged again, with a lower
// threshold), which would store a stub and nest stubs.
func copyParts(v gjson.Result, name string, threshold int) []copyPart {
	if !v.IsObject() {
		return []copyPart{{v, name}}
	}
	var parts []copyPart
	rest := len(v.Raw)
	transcript.ForEachMember(v, func(k string, m gjson.Result) bool {
		if len(m.Raw) > threshold {
			sub := copyParts(m, name+"."+k, threshold)
			parts = append(parts, sub...)
			for _, p := range sub {
				rest -= len(p.v.Raw) - stubRoom
			}
		}
		return true
	})
	if (len(parts) == 0 || rest > threshold) && !holdsStub(v) {
		return []copyPart{{v, name}}
	}
	return parts
}

// lookupIn is transcript.Lookup inside v, with Index relative to the line.
func lookupIn(v gjson.Result, path string) gjson.Result {
	r := transcript.Lookup(v.Raw, path)
	if r.Exists() {
		r.Index += v.Index
	}
	return r
}

func mediaName(media string) string {
	switch media {
	case "image/png":
		return "PNG"
	case "image/jpeg":
		return "JPEG"
	case "image/gif":
		return "GIF"
	case "image/webp":
		return "WebP"
	}
	if media == "" {
		return "unknown type"
	}
	return media
}

// lostResultText is what a synthesised tool_result says.
// lostResultLen is the size of lostResultText as written in a line.
var lostResultLen = len(lostResultText) + 2 // quoted; the text has nothing to escape

// lostResult reports whether a tool_result is (by its is_error flag and
// size) one ccm purge synthesised. It is never moved to the store: a stub
// would be no smaller, and purging a purged file again would change it.
// isLarge and planStubs both decide by it, so they agree.
func lostResult(isError bool, size int) bool { return isError && size == lostResultLen }

const lostResultText = "[Tool result lost: this call's result was never recorded in the transcript (the session was interrupted or the record was lost), so its outcome is unknown. Check whether it took effect before relying on it or running it again. Repaired by ccm purge.]"

// synthLine builds the user record holding synthesised tool results. Its
// envelope (session, cwd, version, branch, sidechain, agent, timestamp) is
// copied from the record it follows, so it looks like its neighbours.
func synthLine(after []byte, s *synthResult) []byte {
	r := transcript.NewRecord(after)
	b := []byte(`{"parentUuid":`)
	b = rawjson.Append(b, s.Parent)
	b = append(b, `,"isSidechain":`...)
	if r.IsSidechain() {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"userType":"external"`...)
	for _, k := range []string{"cwd", "sessionId", "version", "gitBranch", "agentId", "slug"} {
		if v := r.Get(k); v.Type == gjson.String {
			b = append(b, ',')
			b = rawjson.Append(b, k)
			b = append(b, ':')
			b = rawjson.Append(b, v.Str)
		}
	}
	b = append(b, `,"type":"user","message":{"role":"user","content":[`...)
	for i, id := range s.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"tool_result","tool_use_id":`...)
		b = rawjson.Append(b, id)
		b = append(b, `,"content":`...)
		b = rawjson.Append(b, lostResultText)
		b = append(b, `,"is_error":true}`...)
	}
	b = append(b, `]},"uuid":`...)
	b = rawjson.Append(b, s.UUID)
	if ts := r.Get("timestamp"); ts.Type == gjson.String {
		b = append(b, `,"timestamp":`...)
		b = rawjson.Append(b, ts.Str)
	}
	b = append(b, `,"toolUseResult":"Error: tool result lost"}`...)
	return b
}
