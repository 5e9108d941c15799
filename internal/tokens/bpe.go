package tokens

import (
	"container/heap"
	"math"
)

// maxPiece bounds the piece one merge works on. A chunk has no length
// limit (a run of letters or of punctuation can be megabytes long), so a
// longer chunk is counted in maxPiece pieces: exact for every real word,
// and for such a run off by at most one token per piece (about one in a
// hundred).
const maxPiece = 512

// heapFrom is the piece length from which the merge keeps its candidate
// pairs in a heap: the plain merge scans every pair for each of its
// merges, quadratic in the piece's length, which is faster for a word but
// made a run of one character 50 times slower a byte than prose.
const heapFrom = 48

// bpeCount is tiktoken's byte-pair merge, counting the resulting parts.
func bpeCount(ranks map[string]int, piece string) int {
	if len(piece) > maxPiece {
		n := 0
		var prev string
		prevN := 0
		for len(piece) > 0 {
			p := piece[:min(maxPiece, len(piece))]
			piece = piece[len(p):]
			// A run of one repeated character or pattern repeats its
			// pieces: count each distinct neighbour once.
			if p != prev {
				prev, prevN = p, bpeCount(ranks, p)
			}
			n += prevN
		}
		return n
	}
	if _, ok := ranks[piece]; ok || len(piece) <= 1 {
		return 1
	}
	if len(piece) >= heapFrom {
		return bpeCountHeap(ranks, piece)
	}
	type part struct{ start, rank int }
	var buf [heapFrom + 1]part
	parts := buf[:len(piece)+1]
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := range parts {
		parts[i] = part{i, math.MaxInt}
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankOf(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, minIdx = parts[i].rank, i
			}
		}
		if minIdx < 0 {
			break
		}
		i := minIdx
		parts[i].rank = rankOf(i, 1)
		if i > 0 {
			parts[i-1].rank = rankOf(i-1, 1)
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return len(parts) - 1
}

// bpeCountHeap is the same merge with the candidate pairs in a heap
// ordered by rank, then by position: each step merges the pair of lowest
// rank, the leftmost on a tie, as the scan does, in O(log n) instead of
// O(n). Parts form a linked list by their start offsets; a heap entry
// whose part was merged away or whose pair changed rank since is skipped.
func bpeCountHeap(ranks map[string]int, piece string) int {
	n := len(piece)
	next := make([]int32, n) // start of the part after the one at i; n at the end
	prev := make([]int32, n) // start of the part before; -1 at the start
	rank := make([]int, n)   // rank of the pair starting at i; MaxInt if none
	alive := make([]bool, n)
	h := make(pairHeap, 0, n)
	pairRank := func(i int) int {
		j := int(next[i])
		if j >= n {
			return math.MaxInt
		}
		if r, ok := ranks[piece[i:next[j]]]; ok {
			return r
		}
		return math.MaxInt
	}
	for i := range n {
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	for i := range n {
		if rank[i] = pairRank(i); rank[i] != math.MaxInt {
			h = append(h, pair{rank[i], int32(i)})
		}
	}
	heap.Init(&h)
	parts := n
	for h.Len() > 0 {
		p := heap.Pop(&h).(pair)
		i := int(p.pos)
		if !alive[i] || rank[i] != p.rank {
			continue
		}
		// Merge the part at i with the one after it.
		j := next[i]
		alive[j] = false
		next[i] = next[j]
		if int(next[i]) < n {
			prev[next[i]] = int32(i)
		}
		parts--
		if rank[i] = pairRank(i); rank[i] != math.MaxInt {
			heap.Push(&h, pair{rank[i], int32(i)})
		}
		if k := prev[i]; k >= 0 {
			if rank[k] = pairRank(int(k)); rank[k] != math.MaxInt {
				heap.Push(&h, pair{rank[k], k})
			}
		}
	}
	return parts
}

// pair is a candidate merge: the part starting at pos with the next one.
type pair struct {
	rank int
	pos  int32
}

// pairHeap orders candidate merges by rank, then leftmost first.
type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || h[i].rank == h[j].rank && h[i].pos < h[j].pos
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
