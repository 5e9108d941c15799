package purge

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/internal/splice"
	"ccm/internal/stub"
	"ccm/jsonstr"
	"ccm/transcript"
)

// bytesView views b as a string for gjson without copying; results point
// into b and are used before b changes.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

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

// planStubs finds the large values of one line, stores each exactly as it
// is in the line (still JSON-encoded, so ccm restore is a byte splice), and
// queues an edit that puts a stub in its place.
func (w *rewriter) planStubs(line []byte, rec int) error {
	o := w.p.opt
	thr := w.p.thresholdFor(rec)
	s := bytesView(line)
	f := w.p.rec(rec)
	level, reason := w.p.pinFor(rec)
	var firstResult toolInfo
	var firstFound bool
	var err error
	stubValue := func(v gjson.Result, info toolInfo, desc string, asBlock bool, media string) {
		if err != nil {
			return
		}
		if isStub(v) {
			// Already a stub (a purged file purged again with a threshold
			// below a stub's size): stubbing it again would break
			// idempotence and nest stubs.
			return
		}
		raw := line[v.Index : v.Index+len(v.Raw)]
		// Type "json" marks a raw JSON value cut out by purge: ccm restore
		// splices only such blobs back (a hook's stub holds plain text).
		src := ccm.Source{Type: stub.RawValueType, ToolName: info.Name, SessionPath: w.session, FilePath: info.FilePath, Command: info.Command, Description: info.Desc}
		if desc == "" {
			// The Bash description (or Task's) is the stub's desc line, as
			// in the Python tool's v2 stubs.
			desc = info.Desc
		}
		st := stub.Stub{Source: info.source(), Desc: desc, Bytes: int64(len(raw)), Lines: transcript.CountEscapedNewlines(raw), Pinned: level}
		if media != "" {
			// media points into the line buffer, which the reader reuses
			// before the background workers write the metadata.
			media = strings.Clone(media)
			src = ccm.Source{Type: stub.RawValueType, MediaType: media, SessionPath: w.session}
			st.Source = "Image (" + mediaName(media) + ")"
			st.Lines = 0
		} else {
			st.Exit = exitCode(raw)
			src.ExitCode = st.Exit
		}
		var key ccm.Key
		key, err = w.stub.stash(raw, src, level, reason)
		if err != nil {
			return
		}
		st.Key = key
		text := jsonstr.Append(nil, st.String())
		if asBlock {
			text = append(append([]byte(`{"type":"text","text":`), text...), '}')
		}
		w.edits = append(w.edits, splice.Value(v, text))
		w.p.Stats.Stubs++
		w.p.Stats.StubbedBytes += int64(len(raw))
	}
	// One walk over the record's members finds both the message and the
	// toolUseResult, which comes after it: looking each up from the start
	// crossed the message, megabytes of output, twice. transcript's walks,
	// not gjson.Get, for values that may be large: they find them without
	// decoding them.
	var content, tur, att, rendered gjson.Result
	var msgSeen, turSeen bool // the first of a duplicated key, as gjson reads it
	transcript.ForEachMember(gjson.Result{Type: gjson.JSON, Raw: s}, func(k string, v gjson.Result) bool {
		switch {
		case k == "message" && !msgSeen:
			content, msgSeen = lookupIn(v, "content"), true
		case k == "toolUseResult" && !turSeen:
			tur, turSeen = v, true
		case k == "attachment" && !att.Exists():
			att = v
		case k == "rendered" && !rendered.Exists():
			rendered = v
		}
		return true
	})
	if why, ok := w.p.microHooks[rec]; ok {
		stubHook(f, content, att, rendered, func(v gjson.Result) {
			stubValue(v, toolInfo{Name: "hook context"}, why, false, "")
		})
		return err
	}
	if content.IsArray() {
		transcript.ForEachElement(content, func(blk gjson.Result) bool {
			switch blk.Get("type").Str {
			case "tool_result":
				id := blk.Get("tool_use_id").Str
				info := w.tools[id]
				if !firstFound {
					firstResult, firstFound = info, true
				}
				inner := lookupIn(blk, "content")
				if why, ok := microFor(w.p.microResults, rec, id); ok && len(inner.Raw) >= microMin {
					stubValue(inner, info, why, false, "")
				} else if len(inner.Raw) > thr && !lostResult(blk.Get("is_error").Bool(), len(inner.Raw)) {
					stubValue(inner, info, "", false, "")
				} else if inner.IsArray() {
					transcript.ForEachElement(inner, func(ib gjson.Result) bool {
						if ib.Get("type").Str == "image" && len(ib.Raw) > o.ImageMin {
							stubValue(ib, info, "", true, ib.Get("source.media_type").Str)
						}
						return true
					})
				}
			case "image":
				if len(blk.Raw) > o.ImageMin {
					stubValue(blk, toolInfo{}, "", true, blk.Get("source.media_type").Str)
				}
			case "tool_use":
				name := blk.Get("name").Str
				if why, ok := microFor(w.p.microInputs, rec, blk.Get("id").Str); ok {
					if v := lookupIn(blk, "input.todos"); len(v.Raw) >= microMin {
						stubValue(v, toolInfoOf(blk), why, false, "")
					}
				}
				for _, field := range inputFields[name] {
					v := lookupIn(blk, "input."+field)
					if len(v.Raw) > thr {
						stubValue(v, toolInfoOf(blk), "tool_use input "+field, false, "")
					}
				}
			}
			return true
		})
	}
	if f.Type == transcript.TypeUser {
		// The client never sends the toolUseResult copy: it goes by
		// --threshold alone, and copyParts' arithmetic needs a threshold
		// well above a stub's size.
		if len(tur.Raw) > o.Threshold {
			for _, c := range copyParts(tur, "toolUseResult", o.Threshold) {
				stubValue(c.v, firstResult, c.name+" copy", false, "")
			}
		}
	}
	return err
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
	b = jsonstr.Append(b, s.Parent)
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
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = jsonstr.Append(b, v.Str)
		}
	}
	b = append(b, `,"type":"user","message":{"role":"user","content":[`...)
	for i, id := range s.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"tool_result","tool_use_id":`...)
		b = jsonstr.Append(b, id)
		b = append(b, `,"content":`...)
		b = jsonstr.Append(b, lostResultText)
		b = append(b, `,"is_error":true}`...)
	}
	b = append(b, `]},"uuid":`...)
	b = jsonstr.Append(b, s.UUID)
	if ts := r.Get("timestamp"); ts.Type == gjson.String {
		b = append(b, `,"timestamp":`...)
		b = jsonstr.Append(b, ts.Str)
	}
	b = append(b, `,"toolUseResult":"Error: tool result lost"}`...)
	return b
}
