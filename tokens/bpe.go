package tokens

import "math"

// maxPiece bounds the piece one merge works on. The merge is quadratic in
// the piece's length, and a chunk has no length limit (a run of letters
// or of punctuation can be megabytes long), so a longer chunk is counted
// in maxPiece pieces: exact for every real word, and for such a run off
// by at most one token per piece (about one in a hundred).
const maxPiece = 512

// bpeCount is tiktoken's byte-pair merge, counting the resulting parts.
func bpeCount(ranks map[string]int, piece []byte) int {
	if len(piece) > maxPiece {
		n := 0
		for len(piece) > maxPiece {
			n += bpeCount(ranks, piece[:maxPiece])
			piece = piece[maxPiece:]
		}
		return n + bpeCount(ranks, piece)
	}
	if _, ok := ranks[string(piece)]; ok || len(piece) <= 1 {
		return 1
	}
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[string(piece[parts[i].start:parts[i+skip+2].start])]; ok {
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
