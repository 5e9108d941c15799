package transcript

import (
	"strings"

	"github.com/tidwall/gjson"
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

// Facts is the small set of per-record facts the index keeps. Strings are
// copies (never views into a line buffer).
type Facts struct {
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
	ContentEmpty bool
	Blocks       []BlockFacts
	Usage        Usage
	HasUsage     bool
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

// interner keeps one copy of the short strings that repeat on every line.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) > 4096 { // unbounded variety: stop interning
		return clone(s)
	}
	v := clone(s)
	in[v] = v
	return v
}

// extract fills f (and sz, when not nil) from one object line in a single
// walk over its top-level keys, descending only into message, attachment
// and data.
func extract(rec Record, f *Facts, sz *Sizes, in interner) {
	gjson.Parse(rec.s).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.TypeName = in.get(v.Str)
			f.Type = recTypeOf(v.Str)
		case "uuid":
			f.HasUUID = true
			f.UUID = clone(v.Str)
		case "parentUuid":
			f.Parent = clone(v.Str)
		case "logicalParentUuid":
			f.LogicalParent = clone(v.Str)
		case "isSidechain":
			f.Sidechain = v.Bool()
		case "isMeta":
			f.Meta = v.Bool()
		case "isCompactSummary":
			f.CompactSummary = f.CompactSummary || v.Bool()
		case "isApiErrorMessage":
			f.APIError = v.Bool()
		case "subtype":
			f.Subtype = in.get(v.Str)
		case "attachment":
			if f.Subtype == "" {
				f.Subtype = in.get(v.Get("type").Str)
			}
		case "data":
			if f.Subtype == "" && v.IsObject() {
				f.Subtype = in.get(v.Get("type").Str)
			}
		case "toolUseResult":
			if sz != nil {
				sz.ToolUseResult += len(v.Raw)
			}
		case "message":
			if v.IsObject() {
				extractMessage(v, f, sz, in)
			}
		}
		return true
	})
}

func extractMessage(msg gjson.Result, f *Facts, sz *Sizes, in interner) {
	hasContent := false
	msg.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			f.Role = in.get(v.Str)
		case "id":
			f.MsgID = clone(v.Str)
		case "usage":
			f.HasUsage = true
			f.Usage = Usage{
				Input:         v.Get("input_tokens").Int(),
				CacheRead:     v.Get("cache_read_input_tokens").Int(),
				CacheCreation: v.Get("cache_creation_input_tokens").Int(),
				Output:        v.Get("output_tokens").Int(),
			}
		case "content":
			hasContent = true
			switch {
			case v.Type == gjson.String:
				f.ContentString = true
				f.ContentEmpty = v.Str == ""
			case v.IsArray():
				extractBlocks(v, f, sz, in)
				f.ContentEmpty = len(f.Blocks) == 0
			default:
				f.ContentEmpty = true
			}
		}
		return true
	})
	if !hasContent {
		f.ContentEmpty = true
	}
}

func extractBlocks(content gjson.Result, f *Facts, sz *Sizes, in interner) {
	content.ForEach(func(_, blk gjson.Result) bool {
		var b BlockFacts
		var sig, text, data, input, inner gjson.Result
		hasText, hasSig := false, false
		blk.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "type":
				b.TypeName = in.get(v.Str)
				b.Type = blockTypeOf(v.Str)
			case "id":
				b.ID = clone(v.Str)
			case "tool_use_id":
				b.ID = clone(v.Str)
			case "name":
				b.Name = in.get(v.Str)
			case "is_error":
				b.IsError = v.Bool()
			case "text":
				hasText, text = true, v
			case "signature":
				hasSig, sig = true, v
			case "data":
				data = v
			case "input":
				input = v
			case "content":
				inner = v
			}
			return true
		})
		switch b.Type {
		case BlockText:
			b.Empty = !hasText || text.Str == ""
			b.Blank = !b.Empty && strings.TrimSpace(text.Str) == ""
		case BlockThinking:
			b.NoSignature = !hasSig || sig.Str == ""
			b.FakeSignature = !b.NoSignature && !looksBase64(sig.Str)
		case BlockRedactedThinking:
			b.Empty = data.Str == ""
		case BlockToolUse:
			b.InputNotObject = !input.IsObject()
		}
		f.Blocks = append(f.Blocks, b)
		if sz != nil {
			n := len(blk.Raw)
			sz.BlockBytes[b.Type] += n
			switch b.Type {
			case BlockThinking, BlockRedactedThinking:
				sz.Thinking += n
			case BlockToolUse:
				sz.ToolUseInput += len(input.Raw)
			case BlockImage:
				sz.Image += n
			case BlockToolResult:
				imgs := 0
				if inner.IsArray() {
					inner.ForEach(func(_, ib gjson.Result) bool {
						if ib.Get("type").Str == "image" {
							imgs += len(ib.Raw)
						}
						return true
					})
				}
				sz.Image += imgs
				sz.ToolResult += len(inner.Raw) - imgs
				sz.ToolResults = append(sz.ToolResults, ToolOutput{ToolUseID: b.ID, Bytes: len(inner.Raw), IsError: b.IsError})
			}
		}
		return true
	})
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
