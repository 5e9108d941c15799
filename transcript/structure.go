package transcript

// Lines is a count with the first line numbers it covers.
type Lines struct {
	Count int   `json:"count"`
	Lines []int `json:"lines,omitempty"`
}

// maxListed bounds how many line numbers a finding lists.
const maxListed = 50

func (l *Lines) add(line int) {
	l.Count++
	if len(l.Lines) < maxListed {
		l.Lines = append(l.Lines, line)
	}
}

// DanglingParent is a record whose parentUuid names no record in the file.
type DanglingParent struct {
	Line    int    `json:"line"`
	UUID    string `json:"uuid"`
	Missing string `json:"missing_parent"`
}

// ChainInfo describes the active chain.
type ChainInfo struct {
	Records   int  `json:"records"`
	Messages  int  `json:"messages"`
	StartLine int  `json:"start_line,omitempty"`
	Boundary  int  `json:"boundary_line,omitempty"`
	BrokenAt  int  `json:"broken_at_line,omitempty"`
	Attached  int  `json:"attached_parallel_results"`
	Sidechain bool `json:"sidechain,omitempty"`
}

// Structure lists the structural findings of a transcript.
type Structure struct {
	Chain           ChainInfo `json:"active_chain"`
	DanglingParents Lines     `json:"dangling_parents"`
	// Dangling names, for the first of the dangling parents, the record
	// and the uuid its parentUuid names.
	Dangling         []DanglingParent `json:"dangling_parent_uuids,omitempty"`
	DuplicateUUIDs   Lines            `json:"duplicate_uuids"`
	OrphanToolUse    Lines            `json:"orphan_tool_use"`
	ToolUseInFlight  Lines            `json:"tool_use_in_flight"`
	OrphanToolResult Lines            `json:"orphan_tool_result"`
	EmptyContent     Lines            `json:"empty_content"`
	EmptyText        Lines            `json:"empty_text_blocks"`
	BlankText        Lines            `json:"whitespace_text_blocks"`
	TornLines        Lines            `json:"torn_lines"`
	InvalidLines     Lines            `json:"invalid_lines"`
	NULLines         Lines            `json:"nul_lines"`
	OffChainBefore   Lines            `json:"off_chain_before_boundary"`
	OffChainBranches Lines            `json:"off_chain_other_branches"`
	OffChainSide     Lines            `json:"off_chain_sidechains"`
}

// Structural computes the findings over the whole file, with the tool-pair
// findings taken from the API rules on the active chain.
func (ix *Index) Structural(c *Chain, msgs []Message) Structure {
	var s Structure
	s.Chain = ChainInfo{Records: len(c.Recs), Messages: len(msgs), Attached: len(c.Attached), Sidechain: c.Sidechain}
	if c.Start >= 0 {
		s.Chain.StartLine = int(ix.Rec(c.Start).Line)
	}
	if c.Boundary >= 0 {
		s.Chain.Boundary = int(ix.Rec(c.Boundary).Line)
	}
	if c.BrokenAt >= 0 {
		s.Chain.BrokenAt = int(ix.Rec(c.BrokenAt).Line)
	}
	for _, i := range ix.Dangling() {
		f := ix.Rec(i)
		s.DanglingParents.add(int(f.Line))
		if len(s.Dangling) < maxListed {
			s.Dangling = append(s.Dangling, DanglingParent{Line: int(f.Line), UUID: f.UUID(), Missing: f.Parent()})
		}
	}
	for _, i := range ix.Dups {
		s.DuplicateUUIDs.add(int(ix.Rec(i).Line))
	}
	for _, f := range ix.CheckAPI(c, msgs) {
		switch f.Code {
		case "orphan-tool-use":
			s.OrphanToolUse.add(f.Line)
		case "tool-use-in-flight":
			s.ToolUseInFlight.add(f.Line)
		case "orphan-tool-result":
			s.OrphanToolResult.add(f.Line)
		}
	}
	for i := range ix.Len() {
		f := ix.Rec(i)
		if f.IsConversation() && f.ContentEmpty {
			s.EmptyContent.add(int(f.Line))
		}
		for k := range f.NumBlocks() {
			b := f.Block(k)
			if b.Type == BlockText && b.Empty {
				s.EmptyText.add(int(f.Line))
			}
			if b.Blank {
				s.BlankText.add(int(f.Line))
			}
		}
	}
	for _, b := range ix.Bad {
		switch b.Kind {
		case Torn:
			s.TornLines.add(b.Line)
		case Invalid:
			s.InvalidLines.add(b.Line)
		case NUL:
			s.NULLines.add(b.Line)
		}
	}
	off := ix.OffChainRecords(c)
	for _, i := range off.BeforeBoundary {
		s.OffChainBefore.add(int(ix.Rec(i).Line))
	}
	for _, i := range off.OtherBranch {
		s.OffChainBranches.add(int(ix.Rec(i).Line))
	}
	for _, i := range off.Sidechain {
		s.OffChainSide.add(int(ix.Rec(i).Line))
	}
	return s
}
