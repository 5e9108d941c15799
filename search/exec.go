package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"ccm/internal/textindex"
	"ccm/sessions"
)

// Result is a search's hits and what it went through.
type Result struct {
	Hits       []Hit `json:"hits"`
	Candidates int   `json:"candidates"` // messages the index named
	Checked    int   `json:"checked"`    // messages read back and checked
	// Truncated is set when there were more candidates than a search
	// holds: the oldest were left out.
	Truncated bool `json:"truncated,omitempty"`
}

// Limits of one search: the candidates it holds (40 bytes each; the
// newest are kept)
// and, for relevance, the matches it scores.
const (
	relevanceCheck = 2000
	defaultLimit   = 20
)

var maxCandidates = 50_000 // a variable for tests

type candidate struct {
	doc textindex.Doc
	f   *fileEntry
}

// Search answers a query from the index (bring it up to date first).
// Resolve reads the stored content of stubs in live transcripts.
func (ix *Index) Search(ctx context.Context, q *Query, resolve func(string) ([]byte, error)) (*Result, error) {
	if q.Session != "" {
		// A prefix names one session, as on every command.
		id, err := ix.sessionID(q.Session, q.Remote)
		if err != nil {
			return nil, err
		}
		qq := *q
		qq.Session = id
		q = &qq
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	want := limit
	if q.Relevance {
		want = relevanceCheck
	}
	keys := q.keys()
	res := &Result{}
	rd := newReader(ix.dir, resolve, q.Redact)
	rd.broken = ix.markBroken
	defer rd.close()
	var rarity map[string]float64
	if q.Relevance && q.Regex == nil {
		rarity = ix.rarity(q)
	}
	// Candidates are taken newest first, maxCandidates at a time: when the
	// newest are all checked and fewer than wanted matched, the next pass
	// takes those older than the last one checked.
	var before *candidate
	for pass := 0; ; pass++ {
		cands, truncated, err := ix.collect(ctx, q, keys, before)
		if err != nil {
			return nil, err
		}
		if pass == 0 {
			res.Truncated = truncated
		}
		for i := range cands {
			c := &cands[i]
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if len(res.Hits) >= want {
				break
			}
			before = c
			text, agent, err := rd.text(*c)
			res.Checked++
			if err != nil {
				if c.f.Src == srcArchive {
					return nil, fmt.Errorf("%s: %w", c.f.Path, errStalePart)
				}
				continue // changed since it was indexed: the next update re-reads it
			}
			s, e, ok := q.match(text)
			if !ok {
				continue
			}
			h := ix.hit(*c, agent, q)
			h.Snippet, h.Mark = snippet(text, s, e)
			if rarity != nil {
				h.Score = q.score(text, rarity)
			}
			res.Hits = append(res.Hits, h)
		}
		if pass == 0 {
			res.Candidates = len(cands)
		}
		if !truncated || len(res.Hits) >= want || before == nil {
			break
		}
		b := *before
		before = &b
	}
	if q.Relevance {
		sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Score > res.Hits[j].Score })
		if len(res.Hits) > limit {
			res.Hits = res.Hits[:limit]
		}
	}
	return res, nil
}

// collect lists the candidates of a query older than before (all when
// nil), newest first, at most maxCandidates; truncated says whether there
// were more.
func (ix *Index) collect(ctx context.Context, q *Query, keys []uint64, before *candidate) ([]candidate, bool, error) {
	var cands []candidate
	truncated := false
	filter := ix.filter(q)
	for _, se := range ix.cat.Segs {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		s := ix.segs[se.ID].s
		docs, all, err := candidates(s, keys)
		if err != nil {
			return nil, false, err
		}
		add := func(d textindex.Doc) {
			f := ix.cat.byNo[d.File]
			if f == nil || !filter(d, f) {
				return
			}
			c := candidate{d, f}
			if before != nil && !newer(*before, c) {
				return
			}
			cands = append(cands, c)
			if len(cands) >= 2*maxCandidates {
				cands = newest(cands, maxCandidates)
				truncated = true
			}
		}
		if all || len(docs) > s.Docs()/16 {
			want := docs
			err = s.AllDocs(func(i uint32, d textindex.Doc) bool {
				if all {
					add(d)
					return true
				}
				for len(want) > 0 && want[0] < i {
					want = want[1:]
				}
				if len(want) > 0 && want[0] == i {
					add(d)
				}
				return true
			})
		} else {
			for _, i := range docs {
				var d textindex.Doc
				if d, err = s.Doc(i); err != nil {
					break
				}
				add(d)
			}
		}
		if err != nil {
			return nil, false, err
		}
	}
	if len(cands) > maxCandidates {
		truncated = true
	}
	return newest(cands, maxCandidates), truncated, nil
}

// candidates lists the documents of s holding every key, rarest key
// first; all is set when there are no keys (every document is one).
func candidates(s *textindex.Segment, keys []uint64) (docs []uint32, all bool, err error) {
	if len(keys) == 0 {
		return nil, true, nil
	}
	type sized struct {
		k uint64
		n int
	}
	ks := make([]sized, len(keys))
	for i, k := range keys {
		n, err := s.PostingsSize(k)
		if err != nil {
			return nil, false, err
		}
		if n == 0 {
			return nil, false, nil
		}
		ks[i] = sized{k, n}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].n < ks[j].n })
	docs, err = s.Lookup(ks[0].k, nil)
	var other []uint32
	for _, k := range ks[1:] {
		if err != nil || len(docs) == 0 {
			break
		}
		other, err = s.Lookup(k.k, other[:0])
		docs = textindex.Intersect(docs, other)
	}
	return docs, false, err
}

// newer reports whether a comes before b in a search's order: newer
// first, then by file and line, latest first.
func newer(a, b candidate) bool {
	if a.doc.Time != b.doc.Time {
		return a.doc.Time > b.doc.Time
	}
	if a.f.No != b.f.No {
		return a.f.No > b.f.No
	}
	return a.doc.Line > b.doc.Line
}

// newest sorts candidates newest first and keeps n.
func newest(c []candidate, n int) []candidate {
	sort.Slice(c, func(i, j int) bool { return newer(c[i], c[j]) })
	return c[:min(n, len(c))]
}

// filter is the query's selection of messages by their metadata.
func (ix *Index) filter(q *Query) func(d textindex.Doc, f *fileEntry) bool {
	since := uint32(0)
	if !q.Since.IsZero() && q.Since.Unix() > 0 {
		since = uint32(min(q.Since.Unix(), math.MaxUint32))
	}
	tool := uint16(0)
	if q.Tool != "" {
		tool = math.MaxUint16 // no such tool: nothing matches
		for i, t := range ix.cat.Tools {
			if strings.EqualFold(t, q.Tool) {
				tool = uint16(i + 1)
				break
			}
		}
	}
	return func(d textindex.Doc, f *fileEntry) bool {
		switch {
		case q.Kinds != 0 && d.Kind&q.Kinds == 0,
			tool != 0 && d.Tool != tool,
			since != 0 && d.Time < since,
			q.Archived && f.Src != srcArchive,
			q.Live && f.Src != srcLive,
			!visible(f, q.Remote),
			q.Session != "" && f.Session != q.Session,
			q.Project != "" && !sessions.MatchProject(q.Project, f.Project, f.Folder):
			return false
		}
		return true
	}
}

// rarity weighs each word of the query by how few messages hold it.
func (ix *Index) rarity(q *Query) map[string]float64 {
	total, r := 1, map[string]float64{}
	sizes := map[string]int{}
	for _, se := range ix.cat.Segs {
		total += se.Docs
		for _, t := range q.Terms {
			for _, w := range t {
				n, _ := ix.segs[se.ID].s.PostingsSize(textindex.Key(w))
				sizes[w] += n
			}
		}
	}
	for w, n := range sizes {
		r[w] = math.Log(1 + float64(total)/float64(1+n))
	}
	return r
}
