package transcript

import (
	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// Record gives read access to one JSON object line. It wraps the raw
// bytes without copying or decoding them; every accessor is a gjson lookup
// on those bytes. The string accessors return copies, safe to keep; a
// gjson.Result from Get points into the line (Raw, Str, Index) and is
// valid only as long as the line's buffer is.
type Record struct {
	raw []byte
	s   string // the same bytes viewed as a string, for gjson without copies
}

// NewRecord wraps a line body. The bytes must not change while the Record
// is in use.
func NewRecord(body []byte) Record {
	return Record{raw: body, s: rawjson.String(body)}
}

// clone copies a string that may point into a line buffer.
func clone(s string) string {
	if s == "" {
		return ""
	}
	return string(append([]byte(nil), s...))
}

// Raw returns the bytes the record was made from.
func (r Record) Raw() []byte { return r.raw }

// Get looks up a gjson path. The result's Raw and Index refer to the
// record's bytes; Index is the offset of the value in the line.
func (r Record) Get(path string) gjson.Result { return gjson.Get(r.s, path) }

// Lookup is Lookup(path) on the record: the value's span without
// decoding it (Str stays empty), for crossing large values cheaply. The
// record must be a line the reader or the index validated.
func (r Record) Lookup(path string) gjson.Result { return Lookup(r.s, path) }

// Members is transcript.Members over the record: several top-level
// members found in one walk.
func (r Record) Members(keys []string, out []gjson.Result) { Members(r.s, keys, out) }

// Field is r.Get(path) for a small value: found by Lookup, which skips
// the values before it quote to quote, then decoded alone. A missing key
// costs no decoding of the values crossed.
func (r Record) Field(path string) gjson.Result { return Field(r.s, path) }

// Field is gjson.Get(json, path) for a small value of a validated record
// (keys only, no array indexes or wildcards): Lookup, then the value
// parsed alone.
func Field(json, path string) gjson.Result {
	v := Lookup(json, path)
	if !v.Exists() {
		return gjson.Result{}
	}
	return gjson.Parse(v.Raw)
}

// Type is the record's "type": user, assistant, system, summary,
// file-history-snapshot, queue-operation, progress, attachment, or a
// metadata type such as custom-title.
func (r Record) Type() string { return clone(r.Get("type").Str) }

// UUID is the record's uuid ("" when it has none).
func (r Record) UUID() string { return clone(r.Get("uuid").Str) }

// ParentUUID is the record's parentUuid ("" for null or absent).
func (r Record) ParentUUID() string { return clone(r.Get("parentUuid").Str) }

// LogicalParentUUID is a compact boundary's logicalParentUuid.
func (r Record) LogicalParentUUID() string { return clone(r.Get("logicalParentUuid").Str) }

// IsSidechain reports isSidechain:true (subagent records).
func (r Record) IsSidechain() bool { return r.Get("isSidechain").Bool() }

// AgentID is the subagent id carried by sidechain records.
func (r Record) AgentID() string { return clone(r.Get("agentId").Str) }

// SessionID is the record's sessionId.
func (r Record) SessionID() string { return clone(r.Get("sessionId").Str) }

// Timestamp is the record's ISO-8601 timestamp as written.
func (r Record) Timestamp() string { return clone(r.Get("timestamp").Str) }

// RequestID is an assistant record's requestId.
func (r Record) RequestID() string { return clone(r.Get("requestId").Str) }

// MessageID is an assistant record's message.id, shared by the lines of
// one API response.
func (r Record) MessageID() string { return clone(r.Get("message.id").Str) }

// Role is message.role.
func (r Record) Role() string { return clone(r.Get("message.role").Str) }

// Subtype is a system record's subtype (compact_boundary, turn_duration, …).
func (r Record) Subtype() string { return clone(r.Get("subtype").Str) }

// IsCompactSummary reports the summary user record written after a
// compact boundary: top-level isCompactSummary, or the older form inside
// message.content[0]. The text "isCompactSummary":true inside a tool
// result does not count.
func (r Record) IsCompactSummary() bool {
	if r.Get("isCompactSummary").Bool() {
		return true
	}
	return r.Get("message.content.0.isCompactSummary").Bool()
}

// IsMeta reports isMeta:true (slash-command expansions, hook context).
func (r Record) IsMeta() bool { return r.Get("isMeta").Bool() }

// Usage returns message.usage (an object) of an assistant record.
func (r Record) Usage() gjson.Result { return r.Get("message.usage") }

// ToolUseResult returns the record's toolUseResult copy of a tool output.
func (r Record) ToolUseResult() gjson.Result { return r.Get("toolUseResult") }

// Content returns message.content: a string, or an array of blocks.
func (r Record) Content() gjson.Result { return r.Get("message.content") }

// Blocks calls fn for every content block of the record, with its index.
// A string content is not a block list and yields nothing.
func (r Record) Blocks(fn func(i int, b Block) bool) {
	c := r.Content()
	if !c.IsArray() {
		return
	}
	i := 0
	c.ForEach(func(_, v gjson.Result) bool {
		ok := fn(i, Block{v})
		i++
		return ok
	})
}

// Block is one content block of a message, read in place.
type Block struct{ gjson.Result }

// Type is the block type: text, thinking, redacted_thinking, tool_use,
// tool_result, image, document, tool_reference.
func (b Block) Type() string { return clone(b.Get("type").Str) }

// ID is a tool_use block's id.
func (b Block) ID() string { return clone(b.Get("id").Str) }

// ToolUseID is a tool_result block's tool_use_id.
func (b Block) ToolUseID() string { return clone(b.Get("tool_use_id").Str) }

// Name is a tool_use block's tool name.
func (b Block) Name() string { return clone(b.Get("name").Str) }

// IsError reports a tool_result's is_error.
func (b Block) IsError() bool { return b.Get("is_error").Bool() }

// Loc is where a value sits in its line: Offset and Len in bytes of the
// raw (still JSON-encoded) value.
type Loc struct {
	Offset int
	Len    int
}

// LocOf returns the location of a gjson result that was found in a line.
// Index is 0 when gjson could not tell, which cannot happen for a value
// found in a valid object line (a value never starts at offset 0).
func LocOf(res gjson.Result) Loc { return Loc{Offset: res.Index, Len: len(res.Raw)} }
