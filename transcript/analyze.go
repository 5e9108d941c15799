package transcript

import (
	"container/heap"
	"io"
	"sort"
)

// Stat is a count and a byte total.
type Stat struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Categories splits a file's bytes into disjoint categories; they add up
// to the file size.
type Categories struct {
	Thinking      int64 `json:"thinking"`
	ToolResult    int64 `json:"tool_result"`
	ToolUseResult int64 `json:"tool_use_result"`
	ToolUseInput  int64 `json:"tool_use_input"`
	Image         int64 `json:"image"`
	Progress      int64 `json:"progress"`
	FileHistory   int64 `json:"file_history_snapshot"`
	Rest          int64 `json:"rest"`
}

// LargeOutput is one of the largest tool outputs.
type LargeOutput struct {
	Line      int    `json:"line"`
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id"`
	Bytes     int    `json:"bytes"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Boundary is a compact boundary.
type Boundary struct {
	Line      int    `json:"line"`
	Trigger   string `json:"trigger,omitempty"`
	PreTokens int64  `json:"pre_tokens,omitempty"`
}

// Analysis is what ccm analyze reports about one transcript.
type Analysis struct {
	Bytes      int64           `json:"bytes"`
	Lines      int             `json:"lines"`
	Records    map[string]Stat `json:"records"`
	Subtypes   map[string]Stat `json:"subtypes"`
	Blocks     map[string]Stat `json:"blocks"`
	Categories Categories      `json:"categories"`
	Largest    []LargeOutput   `json:"largest_tool_outputs"`
	Boundaries []Boundary      `json:"compact_boundaries"`
	Shape      Shape           `json:"tree"`
	// LastUsage is the usage of the last assistant record on the active
	// chain: the context the session had when it last ran.
	LastUsage *Usage `json:"last_usage,omitempty"`
}

// AnalyzeOptions configure Analyze.
type AnalyzeOptions struct {
	Top int // how many of the largest tool outputs to list
	// Visit, when set, sees every line after the analysis has taken it,
	// with the same arguments (ccm report collects per-turn figures in the
	// same pass).
	Visit Visitor
}

// Analyze indexes a transcript and accounts for its bytes in one pass.
func Analyze(r io.Reader, opt AnalyzeOptions) (*Index, *Analysis, error) {
	a := &Analysis{Records: map[string]Stat{}, Subtypes: map[string]Stat{}, Blocks: map[string]Stat{},
		Largest: []LargeOutput{}, Boundaries: []Boundary{}}
	toolNames := make(map[string]string)
	top := &outputHeap{}
	var account func(l Line, rec Record, f *Facts, sz *Sizes)
	visit := func(l Line, rec Record, f *Facts, sz *Sizes) error {
		account(l, rec, f, sz)
		if opt.Visit != nil {
			return opt.Visit(l, rec, f, sz)
		}
		return nil
	}
	account = func(l Line, rec Record, f *Facts, sz *Sizes) {
		if f == nil {
			a.Records["(not a record: "+l.Kind.String()+")"] = addStat(a.Records["(not a record: "+l.Kind.String()+")"], len(l.Raw))
			a.Categories.Rest += int64(len(l.Raw))
			return
		}
		name := f.TypeName()
		if name == "" {
			name = "(no type)"
		}
		a.Records[name] = addStat(a.Records[name], int(f.Size))
		if f.Subtype() != "" {
			a.Subtypes[name+"/"+f.Subtype()] = addStat(a.Subtypes[name+"/"+f.Subtype()], int(f.Size))
		}
		switch f.Type {
		case TypeProgress:
			a.Categories.Progress += int64(f.Size)
			return
		case TypeFileHistory:
			a.Categories.FileHistory += int64(f.Size)
			return
		}
		if f.IsCompactBoundary() {
			a.Boundaries = append(a.Boundaries, Boundary{Line: int(f.Line),
				Trigger:   clone(rec.Get("compactMetadata.trigger").Str),
				PreTokens: rec.Get("compactMetadata.preTokens").Int()})
		}
		for k := range f.NumBlocks() {
			b := f.Block(k)
			name := b.Type.String()
			n := a.Blocks[name]
			n.Count++
			a.Blocks[name] = n
			if b.Type == BlockToolUse {
				toolNames[b.ID] = b.Name
			}
		}
		for t, n := range sz.BlockBytes {
			if n == 0 {
				continue
			}
			name := BlockType(t).String()
			st := a.Blocks[name]
			st.Bytes += int64(n)
			a.Blocks[name] = st
		}
		c := &a.Categories
		c.Thinking += int64(sz.Thinking)
		c.ToolResult += int64(sz.ToolResult)
		c.ToolUseResult += int64(sz.ToolUseResult)
		c.ToolUseInput += int64(sz.ToolUseInput)
		c.Image += int64(sz.Image)
		c.Rest += int64(int(f.Size) - sz.Thinking - sz.ToolResult - sz.ToolUseResult - sz.ToolUseInput - sz.Image)
		for _, o := range sz.ToolResults {
			top.offer(LargeOutput{Line: int(f.Line), Tool: toolNames[o.ToolUseID], ToolUseID: o.ToolUseID, Bytes: o.Bytes, IsError: o.IsError}, opt.Top)
		}
		return
	}
	ix, err := Build(r, BuildOptions{Sizes: true, Visit: visit})
	if err != nil {
		return ix, nil, err
	}
	a.Bytes, a.Lines = ix.Bytes, ix.Lines
	a.Largest = top.sorted()
	a.Shape = ix.TreeShape()
	return ix, a, nil
}

func addStat(s Stat, n int) Stat { return Stat{Count: s.Count + 1, Bytes: s.Bytes + int64(n)} }

// outputHeap keeps the N largest outputs (a min-heap on Bytes).
type outputHeap []LargeOutput

func (h outputHeap) Len() int           { return len(h) }
func (h outputHeap) Less(i, j int) bool { return h[i].Bytes < h[j].Bytes }
func (h outputHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *outputHeap) Push(x any)        { *h = append(*h, x.(LargeOutput)) }
func (h *outputHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *outputHeap) offer(o LargeOutput, n int) {
	if n <= 0 {
		return
	}
	if h.Len() < n {
		heap.Push(h, o)
		return
	}
	if o.Bytes > (*h)[0].Bytes {
		(*h)[0] = o
		heap.Fix(h, 0)
	}
}

func (h *outputHeap) sorted() []LargeOutput {
	out := append([]LargeOutput(nil), (*h)...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// ChainUsage returns the usage of the last assistant record on the chain
// that reports one.
func (ix *Index) ChainUsage(c *Chain) (Usage, bool) {
	for k := len(c.Recs) - 1; k >= 0; k-- {
		f := ix.Rec(c.Recs[k])
		if f.Type == TypeAssistant && f.HasUsage && !f.APIError {
			return f.Usage(), true
		}
	}
	return Usage{}, false
}
