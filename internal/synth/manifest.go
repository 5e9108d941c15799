package synth

// Manifest is the generator's own account of what it wrote: counts by record
// type, sizes, the active chain, and every planted defect with its line. It
// is bookkeeping kept while writing, never derived by parsing the output, so
// tests can compare a parser's findings against it.
type Manifest struct {
	// Seed and Version echo the options used.
	Seed    int64  `json:"seed"`
	Version string `json:"version"`
	// SessionID is the sessionId on every record; AgentID is set for
	// subagent files written by WriteSubagent.
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId,omitempty"`
	// Lines is the number of lines, counting a torn last line; Bytes the
	// file size.
	Lines int   `json:"lines"`
	Bytes int64 `json:"bytes"`
	// Types counts well-formed record lines by their "type"; Subtypes by
	// "type/sub": system/<subtype>, progress/<data.type>,
	// attachment/<attachment.type>, user/prompt, user/tool_result,
	// user/compact_summary, assistant/<block type>, assistant/empty.
	// Lines planted by invalid-line, nul-padding, array-line, blank-line and
	// torn-last-line are counted only in BadLines (the complete record of
	// unterminated-last-record is counted as a record).
	Types    map[string]int `json:"types"`
	Subtypes map[string]int `json:"subtypes"`
	BadLines int            `json:"badLines"`
	// Prompts counts human user prompts written, dead branches included.
	Prompts int `json:"prompts"`
	// ActivePrompts counts the user prompts reached by walking parentUuid
	// from LeafUUID (the last record with a uuid). The walk stops at the
	// newest compact_boundary or dangling parent, so prompts before them,
	// and those on dead rewind branches, are not counted.
	ActivePrompts int    `json:"activePrompts"`
	LeafUUID      string `json:"leafUuid"`
	// ToolUses and ToolResults count tool_use and tool_result blocks
	// written; ToolPairs counts tool ids with both written (main file and
	// inline sidechains).
	ToolUses    int `json:"toolUses"`
	ToolResults int `json:"toolResults"`
	ToolPairs   int `json:"toolPairs"`
	// ThinkingBlocks, Images, Compactions, Rewinds and SidechainRecords
	// count what their names say (Images: image blocks).
	ThinkingBlocks   int `json:"thinkingBlocks"`
	Images           int `json:"images"`
	Compactions      int `json:"compactions"`
	Rewinds          int `json:"rewinds"`
	SidechainRecords int `json:"sidechainRecords"`
	// Pins lists the planted ccm:pin directives.
	Pins []Pin `json:"pins,omitempty"`
	// Defects lists every planted defect, in file order. InFlight (when
	// Options.InFlight) is reported here too, with Kind "in-flight".
	Defects []Planted `json:"defects,omitempty"`
}

// Planted describes one planted defect.
type Planted struct {
	// Kind is the defect; "in-flight" for Options.InFlight.
	Kind Defect `json:"kind"`
	// Line is the 1-based line number of the defective line.
	Line int `json:"line"`
	// UUID is the uuid of the record involved (the duplicated uuid, the
	// record with the dangling parent, the torn record, …).
	UUID string `json:"uuid,omitempty"`
	// ToolUseID is the tool id involved, for tool-pair defects and for a
	// dangling parent on a tool_result.
	ToolUseID string `json:"toolUseId,omitempty"`
	// Parent is the absent uuid named by a dangling parentUuid (also for
	// midway-root); for torn-last-line and unterminated-last-record, the
	// parentUuid of the last record; for parallel-fork, the uuid of the
	// first tool_use line.
	Parent string `json:"parent,omitempty"`
	// OtherLine is the line of the first copy for duplicate-uuid, and for
	// unterminated-last-record the line of the assistant or user record
	// the trailing progress records hang off.
	OtherLine int `json:"otherLine,omitempty"`
	// UseLines and ResultLines are, for parallel-fork, the lines of the
	// round's tool_use records and of their tool_result records, in call
	// order (result i answers use i and hangs off it).
	UseLines    []int `json:"useLines,omitempty"`
	ResultLines []int `json:"resultLines,omitempty"`
	// ProgressLines are, for unterminated-last-record, the lines of the
	// progress records between OtherLine and Line, in chain order.
	ProgressLines []int `json:"progressLines,omitempty"`
	// Note says in words what was planted.
	Note string `json:"note"`
}

// Pin is one planted ccm:pin directive.
type Pin struct {
	// Directive is the exact text planted, e.g. `ccm:pin next level=hard`.
	Directive string `json:"directive"`
	// Line and UUID locate the record holding it; Role is user or assistant.
	Line int    `json:"line"`
	UUID string `json:"uuid"`
	Role string `json:"role"`
}

// DefectsOf returns the planted defects of kind k.
func (m *Manifest) DefectsOf(k Defect) []Planted {
	var out []Planted
	for _, p := range m.Defects {
		if p.Kind == k {
			out = append(out, p)
		}
	}
	return out
}
