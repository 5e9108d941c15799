package transcript

import (
	"bytes"

	"ccm/internal/rawjson"
)

// RecType is the kind of a record, from its "type" field.
type RecType uint8

// Record kinds. Other covers metadata records (custom-title, ai-title,
// last-prompt, tag, mode, …) and types this version does not know; they
// pass through untouched.
const (
	TypeOther RecType = iota
	TypeUser
	TypeAssistant
	TypeSystem
	TypeProgress
	TypeAttachment
	TypeSummary
	TypeFileHistory
	TypeQueue
)

func recTypeOf(s string) RecType {
	switch s {
	case "user":
		return TypeUser
	case "assistant":
		return TypeAssistant
	case "system":
		return TypeSystem
	case "progress":
		return TypeProgress
	case "attachment":
		return TypeAttachment
	case "summary":
		return TypeSummary
	case "file-history-snapshot":
		return TypeFileHistory
	case "queue-operation":
		return TypeQueue
	}
	return TypeOther
}

// BlockType is the type of a content block.
type BlockType uint8

// Content block types.
const (
	BlockOther BlockType = iota
	BlockText
	BlockThinking
	BlockRedactedThinking
	BlockToolUse
	BlockToolResult
	BlockImage
	BlockDocument
)

var blockTypeNames = [...]string{BlockOther: "other", BlockText: "text", BlockThinking: "thinking",
	BlockRedactedThinking: "redacted_thinking", BlockToolUse: "tool_use", BlockToolResult: "tool_result",
	BlockImage: "image", BlockDocument: "document"}

func (t BlockType) String() string { return blockTypeNames[t] }

func blockTypeOf(s string) BlockType {
	switch s {
	case "text":
		return BlockText
	case "thinking":
		return BlockThinking
	case "redacted_thinking":
		return BlockRedactedThinking
	case "tool_use":
		return BlockToolUse
	case "tool_result":
		return BlockToolResult
	case "image":
		return BlockImage
	case "document":
		return BlockDocument
	}
	return BlockOther
}

// BlockFacts is what the index keeps of one content block.
type BlockFacts struct {
	Type     BlockType
	TypeName string // as written, for unknown types
	ID       string // tool_use id, or tool_result tool_use_id
	Name     string // tool_use name
	IsError  bool   // tool_result is_error
	// Empty is a text block whose text is "" (or missing), or a
	// redacted_thinking block without data. The API rejects both.
	Empty bool
	// Blank is a text block of whitespace only, such as the "\n\n" block
	// Claude Code writes before thinking; the client drops it when sending.
	Blank bool
	// NoSignature is a thinking block without a signature; FakeSignature
	// one whose signature is not base64 (e.g. "[REDACTED_SIGNATURE]").
	NoSignature, FakeSignature bool
	// InputNotObject is a tool_use whose input is not a JSON object.
	InputNotObject bool
}

// Usage is the token usage an assistant record reports.
type Usage struct {
	Input, CacheRead, CacheCreation, Output int64
}

// Total is the context size the usage stands for.
func (u Usage) Total() int64 { return u.Input + u.CacheRead + u.CacheCreation + u.Output }

// lineFacts is what the walk over one line finds, before the index keeps
// it compactly (Facts). Its strings are views into the line, copied only
// where the line escapes them: they are valid until the line's buffer is
// reused, and the assembler copies what it keeps (see strtab.keep).
type lineFacts struct {
	Line     int
	Offset   int64
	Size     int // bytes including the line terminator
	Type     RecType
	TypeName string
	Subtype  string // system subtype, attachment.type, or progress data.type

	UUID, Parent, LogicalParent string
	HasUUID                     bool // the record carries a uuid field

	Sidechain, Meta, CompactSummary, APIError bool

	MsgID string
	Role  string
	// ContentString is true when message.content is a string.
	ContentString bool
	// ContentEmpty is true for content "", [] or missing.
	ContentEmpty  bool
	Blocks        []BlockFacts // reused from line to line
	Usage         Usage
	HasUsage      bool
	TextBytes     int64
	Images        int
	ThinkingBytes int64
}

// textSize is how much a raw text value adds to TextBytes: a string
// without its quotes, anything else (a tool input object) as written.
func textSize(raw []byte) int64 {
	if len(raw) == 0 || rawEmptyString(raw) {
		return 0
	}
	if raw[0] == '"' {
		return int64(len(raw) - 2)
	}
	return int64(len(raw))
}

// Sizes is the byte accounting of one record by category. The categories
// are disjoint; what is in none of them is "the rest".
type Sizes struct {
	Thinking      int // thinking and redacted_thinking blocks, signatures included
	ToolResult    int // tool_result content, images inside it excluded
	ToolUseResult int // the top-level toolUseResult copy
	ToolUseInput  int // tool_use input objects
	Image         int // image blocks, top level and inside tool results
	// BlockBytes is the raw size of each block by type, for the block table.
	BlockBytes [len(blockTypeNames)]int
	// ToolResults lists each tool_result's id and content size, for the
	// largest-outputs table.
	ToolResults []ToolOutput
}

// ToolOutput is one tool_result's size.
type ToolOutput struct {
	ToolUseID string
	Bytes     int
	IsError   bool
}

// extract fills f (and sz, when not nil) from one object line in a single
// walk: values are skipped, or walked into where the index needs their
// insides (message, its content blocks), never both (see walk.go for why
// this is not gjson).
//
// It reports whether the line is valid JSON: the walk validates as it goes
// (it replaces a separate validation pass); on false, f is incomplete.
func extract(body []byte, f *lineFacts, sz *Sizes) bool {
	w := &walker{b: body}
	b := body
	end := w.object(rawjson.SkipSpace(b, 0), func(k []byte, vs int) int {
		if string(k) == "message" && vs < len(b) && b[vs] == '{' {
			return extractMessage(w, vs, f, sz)
		}
		ve := w.value(vs)
		v := b[vs:ve]
		switch string(k) {
		case "type":
			t := strView(v)
			f.TypeName = t
			f.Type = recTypeOf(t)
		case "uuid":
			f.HasUUID = true
			f.UUID = strView(v)
		case "parentUuid":
			f.Parent = strView(v)
		case "logicalParentUuid":
			f.LogicalParent = strView(v)
		case "isSidechain":
			f.Sidechain = isTrue(v)
		case "isMeta":
			f.Meta = isTrue(v)
		case "isCompactSummary":
			f.CompactSummary = f.CompactSummary || isTrue(v)
		case "isApiErrorMessage":
			f.APIError = isTrue(v)
		case "subtype":
			f.Subtype = strView(v)
		case "attachment", "data":
			if f.Subtype == "" {
				members(v, func(k2, v2 []byte) bool {
					if string(k2) == "type" {
						f.Subtype = strView(v2)
						return false
					}
					return true
				})
			}
		case "toolUseResult":
			if sz != nil {
				sz.ToolUseResult += len(v)
			}
		}
		return ve
	})
	return !w.bad && rawjson.SkipSpace(b, end) == len(b)
}

// extractMessage walks message (starting at b[i]) and returns its end.
func extractMessage(w *walker, i int, f *lineFacts, sz *Sizes) int {
	b := w.b
	hasContent := false
	end := w.object(i, func(k []byte, vs int) int {
		if string(k) == "content" && vs < len(b) && b[vs] == '[' {
			hasContent = true
			ve := w.array(vs, func(es int) int { return extractBlock(w, es, f, sz) })
			f.ContentEmpty = len(f.Blocks) == 0
			return ve
		}
		ve := w.value(vs)
		v := b[vs:ve]
		switch string(k) {
		case "role":
			f.Role = strView(v)
		case "id":
			f.MsgID = strView(v)
		case "usage":
			f.HasUsage = true
			members(v, func(k2, v2 []byte) bool {
				switch string(k2) {
				case "input_tokens":
					f.Usage.Input = rawInt(v2)
				case "cache_read_input_tokens":
					f.Usage.CacheRead = rawInt(v2)
				case "cache_creation_input_tokens":
					f.Usage.CacheCreation = rawInt(v2)
				case "output_tokens":
					f.Usage.Output = rawInt(v2)
				}
				return true
			})
		case "content":
			hasContent = true
			if len(v) > 0 && v[0] == '"' {
				f.ContentString = true
				f.ContentEmpty = rawEmptyString(v)
				f.TextBytes += textSize(v)
			} else {
				f.ContentEmpty = true // null, a number: nothing to send
			}
		}
		return ve
	})
	if !hasContent {
		f.ContentEmpty = true
	}
	return end
}

// extractBlock reads one content block starting at b[i] and returns its end.
func extractBlock(w *walker, i int, f *lineFacts, sz *Sizes) int {
	b := w.b
	var bf BlockFacts
	var sig, text, thinking, name, data, input []byte
	innerLen, imgs, nimgs := 0, 0, 0
	var innerText int64
	hasText, hasSig := false, false
	end := w.object(i, func(k []byte, vs int) int {
		if string(k) == "content" {
			// A tool result's content: a string is text; an array is
			// walked for its text and image elements.
			var ve int
			if vs < len(b) && b[vs] == '[' {
				ve = w.array(vs, func(es int) int {
					var et, etext []byte
					ee := w.object(es, func(k2 []byte, vs2 int) int {
						ve2 := w.value(vs2)
						switch string(k2) {
						case "type":
							et = b[vs2:ve2]
						case "text":
							etext = b[vs2:ve2]
						}
						return ve2
					})
					switch string(et) {
					case `"image"`:
						imgs += ee - es
						nimgs++
					case `"text"`:
						innerText += textSize(etext)
					}
					return ee
				})
			} else {
				ve = w.value(vs)
				if vs < len(b) && b[vs] == '"' {
					innerText = textSize(b[vs:ve])
				}
			}
			innerLen = ve - vs
			return ve
		}
		ve := w.value(vs)
		v := b[vs:ve]
		switch string(k) {
		case "type":
			t := strView(v)
			bf.TypeName = t
			bf.Type = blockTypeOf(t)
		case "id", "tool_use_id":
			bf.ID = strView(v)
		case "name":
			name = v
			bf.Name = strView(v)
		case "is_error":
			bf.IsError = isTrue(v)
		case "text":
			hasText, text = true, v
		case "thinking":
			thinking = v
		case "signature":
			hasSig, sig = true, v
		case "data":
			data = v
		case "input":
			input = v
		case "isCompactSummary":
			if isTrue(v) {
				f.CompactSummary = true
			}
		}
		return ve
	})
	switch bf.Type {
	case BlockText:
		f.TextBytes += textSize(text)
	case BlockThinking:
		f.TextBytes += textSize(thinking)
		f.ThinkingBytes += textSize(thinking)
	case BlockToolUse:
		f.TextBytes += textSize(name) + textSize(input)
	case BlockImage:
		f.Images++
	case BlockToolResult:
		f.TextBytes += innerText
		f.Images += nimgs
	}
	switch bf.Type {
	case BlockText:
		bf.Empty = !hasText || rawEmptyString(text)
		bf.Blank = !bf.Empty && rawBlankString(text)
	case BlockThinking:
		bf.NoSignature = !hasSig || rawEmptyString(sig) || len(sig) == 0 || sig[0] != '"'
		bf.FakeSignature = !bf.NoSignature && !looksBase64Raw(sig)
	case BlockRedactedThinking:
		bf.Empty = len(data) == 0 || rawEmptyString(data)
	case BlockToolUse:
		bf.InputNotObject = len(input) == 0 || input[0] != '{'
	}
	f.Blocks = append(f.Blocks, bf)
	if sz != nil {
		n := end - i
		sz.BlockBytes[bf.Type] += n
		switch bf.Type {
		case BlockThinking, BlockRedactedThinking:
			sz.Thinking += n
		case BlockToolUse:
			sz.ToolUseInput += len(input)
		case BlockImage:
			sz.Image += n
		case BlockToolResult:
			sz.Image += imgs
			sz.ToolResult += innerLen - imgs
			sz.ToolResults = append(sz.ToolResults, ToolOutput{ToolUseID: clone(bf.ID), Bytes: innerLen, IsError: bf.IsError})
		}
	}
	return end
}

// looksBase64Raw is looksBase64 on a raw JSON string: base64 has no
// characters that JSON escapes (except "/", which may be written "\/").
func looksBase64Raw(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return looksBase64(str(raw))
	}
	return looksBase64(rawjson.String(inner))
}

// looksBase64 tells a real signature (base64, starting Eu…/Et…) from a
// placeholder such as "[REDACTED_SIGNATURE]".
func looksBase64(s string) bool {
	if len(s) < 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
