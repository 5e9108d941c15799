package transcript

// Chain is the conversation Claude Code rebuilds on resume: the walk from
// the last main-chain record back along parentUuid, plus the parallel
// tool results that hang off it and are attached by tool id.
type Chain struct {
	// Recs are the records of the walk, root first, as record numbers (Index.Rec).
	Recs []int
	// Start is the record the walk began from (-1 for a file with no
	// user or assistant record).
	Start int
	// Boundary is the compact_boundary that ended the walk, or -1.
	Boundary int
	// BrokenAt is the record whose parentUuid named a missing record, which
	// ended the walk (everything before it is lost on resume), or -1.
	BrokenAt int
	// Cycle is set when the walk met a record twice.
	Cycle bool
	// Attached are off-walk user records whose tool results answer tool
	// calls on the walk and whose parent is on the walk (parallel calls).
	Attached []int
	// On marks every record that is on the walk or attached.
	On []bool
	// Sidechain is set when the chain is a subagent's (a file with no
	// main-chain conversation).
	Sidechain bool
}

// Reached reports whether a record is on the active chain or attached to it.
func (c *Chain) Reached(i int) bool { return i >= 0 && i < len(c.On) && c.On[i] }

// lastConversation returns the last user or assistant record on the given
// side (main chain or sidechain), or -1.
func (ix *Index) lastConversation(sidechain bool) int {
	for i := ix.Len() - 1; i >= 0; i-- {
		f := ix.Rec(i)
		if f.IsConversation() && f.Sidechain == sidechain {
			return i
		}
	}
	return -1
}

// ActiveChain computes the chain resume would rebuild. The walk starts at
// the last main-chain user or assistant record (the last sidechain one in
// a subagent file), follows parentUuid, and stops at a root, at a
// compact_boundary, at a parentUuid naming a missing record, or at a cycle.
func (ix *Index) ActiveChain() *Chain {
	c := &Chain{Start: -1, Boundary: -1, BrokenAt: -1, On: make([]bool, ix.Len())}
	start := ix.lastConversation(false)
	if start < 0 {
		start = ix.lastConversation(true)
		c.Sidechain = start >= 0
	}
	c.Start = start
	if start < 0 {
		return c
	}
	var rev []int
	for cur := start; ; {
		if c.On[cur] {
			c.Cycle = true
			break
		}
		c.On[cur] = true
		rev = append(rev, cur)
		f := ix.Rec(cur)
		if f.IsCompactBoundary() {
			c.Boundary = cur
			break
		}
		if f.Parent() == "" {
			break
		}
		p, ok := ix.Lookup(f.Parent())
		if !ok {
			c.BrokenAt = cur
			break
		}
		cur = p
	}
	c.Recs = make([]int, len(rev))
	for i, r := range rev {
		c.Recs[len(rev)-1-i] = r
	}
	ix.attachParallelResults(c)
	return c
}

// attachParallelResults finds tool-result records that hang off the walk
// by their parent and answer a tool_use on the walk that has no result on
// it. Claude Code attaches these by tool id (docs/transcript-format.md,
// "How a resume rebuilds the conversation"),
// also when the record carries text besides its results: parallel calls
// are sometimes written as a chain of tool_use lines whose results are
// siblings, each hanging off its own tool_use line.
func (ix *Index) attachParallelResults(c *Chain) {
	ix.attachSplitSiblings(c)
	uses := make(map[string]bool)
	answered := make(map[string]bool)
	for _, i := range append(c.Recs[:len(c.Recs):len(c.Recs)], c.Attached...) {
		for k := range ix.Rec(i).NumBlocks() {
			b := ix.Rec(i).Block(k)
			switch b.Type {
			case BlockToolUse:
				uses[b.ID] = true
			case BlockToolResult:
				answered[b.ID] = true
			}
		}
	}
	if len(uses) == len(answered) {
		return
	}
	for i := range ix.Len() {
		f := ix.Rec(i)
		if c.On[i] || f.Type != TypeUser || f.Sidechain != c.Sidechain || f.NumBlocks() == 0 {
			continue
		}
		p := ix.ParentOf(i)
		if p < 0 || !c.On[p] {
			continue
		}
		// Every tool result must answer a call on the walk that has no
		// result yet; other blocks may come with them: a user record can
		// hold a parallel call's result and the text the user typed while
		// the tools ran, and the client sends both (the text after the
		// results of that turn).
		results, ok := 0, true
		for k := range f.NumBlocks() {
			b := f.Block(k)
			if b.Type != BlockToolResult {
				continue
			}
			results++
			if !uses[b.ID] || answered[b.ID] {
				ok = false
				break
			}
		}
		if !ok || results == 0 {
			continue
		}
		for k := range f.NumBlocks() {
			b := f.Block(k)
			if b.Type == BlockToolResult {
				answered[b.ID] = true
			}
		}
		c.On[i] = true
		c.Attached = append(c.Attached, i)
	}
}

// attachSplitSiblings attaches the off-walk lines of assistant messages
// that are on the walk: a line of the same message.id whose parent is on
// the walk. Claude Code writes parallel calls as a chain of tool_use lines
// and may continue the conversation from an earlier one of them, so a
// later tool_use line (and its result) hangs beside the walk; the client
// still sends it as part of that message. Attached siblings come first in
// c.Attached, before the results that answer them.
func (ix *Index) attachSplitSiblings(c *Chain) {
	ids := make(map[string]bool)
	for _, i := range c.Recs {
		if f := ix.Rec(i); f.Type == TypeAssistant && f.MsgID() != "" {
			ids[f.MsgID()] = true
		}
	}
	if len(ids) == 0 {
		return
	}
	for i := range ix.Len() {
		f := ix.Rec(i)
		if c.On[i] || f.Type != TypeAssistant || f.Sidechain != c.Sidechain || f.MsgID() == "" || !ids[f.MsgID()] {
			continue
		}
		if p := ix.ParentOf(i); p < 0 || !c.On[p] {
			continue
		}
		c.On[i] = true
		c.Attached = append(c.Attached, i)
	}
}

// Shape describes the parent tree of a transcript.
type Shape struct {
	Roots  int `json:"roots"`  // records with a uuid and no parentUuid
	Leaves int `json:"leaves"` // records with a uuid that no record names as parent
	Forks  int `json:"forks"`  // records that two or more records name as parent
}

// TreeShape counts roots, leaves and forks.
func (ix *Index) TreeShape() Shape {
	children := make([]int32, ix.Len())
	var s Shape
	for i := range ix.Len() {
		f := ix.Rec(i)
		if !f.HasUUID {
			continue
		}
		if f.Parent() == "" {
			s.Roots++
			continue
		}
		if p := ix.ParentOf(i); p >= 0 {
			children[p]++
		}
	}
	for i := range ix.Len() {
		if !ix.Rec(i).HasUUID {
			continue
		}
		switch {
		case children[i] == 0:
			s.Leaves++
		case children[i] > 1:
			s.Forks++
		}
	}
	return s
}

// OffChain splits the user and assistant records that are not reached by
// the active chain: before its compact boundary (or break), in sidechains
// (of a main file), and on other branches (rewinds, retries).
type OffChain struct {
	BeforeBoundary, Sidechain, OtherBranch []int
}

// Total counts all off-chain conversation records.
func (o OffChain) Total() int { return len(o.BeforeBoundary) + len(o.Sidechain) + len(o.OtherBranch) }

// OffChainRecords classifies the conversation records the chain misses.
func (ix *Index) OffChainRecords(c *Chain) OffChain {
	var o OffChain
	cut := -1 // records at or before this index precede the boundary or break
	if c.Boundary >= 0 {
		cut = c.Boundary
	} else if c.BrokenAt >= 0 && len(c.Recs) > 0 {
		cut = c.Recs[0]
	}
	for i := range ix.Len() {
		f := ix.Rec(i)
		if !f.IsConversation() || c.Reached(i) {
			continue
		}
		switch {
		case f.Sidechain != c.Sidechain:
			o.Sidechain = append(o.Sidechain, i)
		case i < cut:
			o.BeforeBoundary = append(o.BeforeBoundary, i)
		default:
			o.OtherBranch = append(o.OtherBranch, i)
		}
	}
	return o
}
