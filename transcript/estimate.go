package transcript

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	pool "ccm/internal/batch"
	"ccm/internal/tokens"
)

// sampleRecords is how many records a sampled estimate tokenizes beyond
// the exact budget, and sampleText how much of each one's text.
// TestSampledEstimate bounds the error of this sample.
const (
	sampleRecords = 64
	sampleText    = 2 << 10
)

// EstimateContext estimates the tokens msgs send to the model. The first
// EstimateBudget bytes of text are tokenized exactly (one text longer
// than that on windows, appendSplit). Beyond them, the
// index already knows every record's text size (Facts.TextBytes, from the
// scan), so only a sample of records is read again: sampleRecords of
// them, drawn with a probability proportional to their text (systematic
// sampling over the cumulated sizes), each tokenized over its first
// sampleText bytes; the mean tokens per byte of the sample scales the
// rest. The tokenizing runs on every core.
func (ix *Index) EstimateContext(ra io.ReaderAt, c *Chain, msgs []Message) (Estimate, error) {
	return ix.estimateContext(ra, msgs, EstimateBudget)
}

// textPiece is one text to tokenize, for the exact part (owner -1) or for
// sample number owner. A piece of the exact part that stands for more
// text than its own (a window of a long text) has a scale above 1: its
// tokens are multiplied by it.
type textPiece struct {
	s     string
	owner int
	scale float64
}

// tokens returns the piece's share of the exact part, count being its
// own tokens.
func (p textPiece) tokens(count int) float64 {
	if p.scale > 0 {
		return float64(count) * p.scale
	}
	return float64(count)
}

func (ix *Index) estimateContext(ra io.ReaderAt, msgs []Message, budget int64) (Estimate, error) {
	var recs []int
	for _, m := range msgs {
		recs = append(recs, m.Recs...)
	}
	var est Estimate
	var pieces []textPiece
	var buf []byte
	read := func(i int) ([]byte, error) {
		f := ix.Rec(i)
		if cap(buf) < int(f.Size) {
			buf = make([]byte, f.Size)
		}
		b := buf[:f.Size]
		if _, err := ra.ReadAt(b, f.Offset); err != nil {
			return nil, fmt.Errorf("read line %d: %w", f.Line, err)
		}
		return b, nil
	}
	// The exact part: whole records while their text fits the budget.
	var spent int64
	i := 0
	for ; i < len(recs) && spent <= budget; i++ {
		f := ix.Rec(recs[i])
		spent += f.TextBytes
		est.Images += int(f.Images)
		if f.TextBytes == 0 {
			continue
		}
		line, err := read(recs[i])
		if err != nil {
			return Estimate{}, err
		}
		forEachText(NewRecord(line), func(raw []byte) {
			if textSize(raw) > 0 {
				s := decodeText(raw)
				est.Bytes += int64(len(s))
				pieces = appendSplit(pieces, s, budget)
			}
		}, new(int))
	}
	// The rest: its size from the index, its tokens per byte from a sample.
	var restBytes int64
	for _, r := range recs[i:] {
		restBytes += ix.Rec(r).TextBytes
		est.Images += int(ix.Rec(r).Images)
	}
	type sample struct {
		hits int   // sample points that fell on this record
		raw  int64 // escaped bytes tokenized
	}
	var samples []sample
	if restBytes > 0 {
		step := float64(restBytes) / sampleRecords
		var cum int64
		k := 0
		for _, r := range recs[i:] {
			tb := ix.Rec(r).TextBytes
			hits := 0
			for k < sampleRecords && (float64(k)+0.5)*step < float64(cum+tb) {
				hits++
				k++
			}
			cum += tb
			if hits == 0 {
				continue
			}
			line, err := read(r)
			if err != nil {
				return Estimate{}, err
			}
			owner := len(samples)
			var raw int64
			forEachText(NewRecord(line), func(t []byte) {
				if raw >= sampleText || textSize(t) == 0 {
					return
				}
				if int64(len(t)) > sampleText-raw {
					t = t[:sampleText-raw]
				}
				raw += textSize(t)
				pieces = append(pieces, textPiece{s: decodeText(t), owner: owner})
			}, new(int))
			samples = append(samples, sample{hits: hits, raw: raw})
		}
	}
	counts, err := countPieces(pieces)
	if err != nil {
		return Estimate{}, err
	}
	sampleTokens := make([]int64, len(samples))
	var exact float64
	for j, p := range pieces {
		if p.owner < 0 {
			exact += p.tokens(counts[j])
			est.Sampled = est.Sampled || p.scale > 0
		} else {
			sampleTokens[p.owner] += int64(counts[j])
		}
	}
	est.Tokens = int64(math.Round(exact))
	if len(samples) > 0 {
		var rate float64 // the mean tokens per escaped byte over the points
		points := 0
		for j, sm := range samples {
			if sm.raw > 0 {
				rate += float64(sm.hits) * float64(sampleTokens[j]) / float64(sm.raw)
				points += sm.hits
			}
		}
		if points > 0 {
			est.Sampled = true
			est.Bytes += restBytes
			est.Tokens += int64(float64(restBytes) * rate / float64(points))
		}
	}
	est.Tokens += int64(est.Images) * ImageTokens
	return est, nil
}

// pieceSize is the size above which a text is tokenized in pieces, cut
// after a newline, so that the cores share the work evenly.
const pieceSize = 16 << 10

// longWindows is how many windows of pieceSize bytes stand for a text
// longer than the budget.
const longWindows = 16

// appendSplit appends s to pieces, cut after newlines into pieces of about
// pieceSize. cl100k never merges across a newline followed by other text,
// so the count changes only where a cut splits a run of blank lines.
//
// A text longer than budget is counted on longWindows windows spread
// evenly over it, scaled to its length: one tool output can be tens of
// megabytes, and tokenizing text the counter has not seen runs at a few
// megabytes a second (base64, or one long word), while reading it runs at
// hundreds; sampled, the time an estimate takes depends on the size of
// its text, not on how that text splits into words.
func appendSplit(pieces []textPiece, s string, budget int64) []textPiece {
	if int64(len(s)) > budget && len(s) > longWindows*pieceSize {
		return appendWindows(pieces, s)
	}
	for len(s) > 2*pieceSize {
		cut := strings.IndexByte(s[pieceSize:], '\n')
		if cut < 0 || cut > pieceSize {
			break
		}
		cut += pieceSize + 1
		pieces = append(pieces, textPiece{s: s[:cut], owner: -1})
		s = s[cut:]
	}
	return append(pieces, textPiece{s: s, owner: -1})
}

// appendWindows appends longWindows windows of s, each about pieceSize
// bytes from the middle of one of longWindows equal parts, cut at rune
// starts, scaled so that together they stand for all of s. A cut may
// split a word: at most a token off per cut.
func appendWindows(pieces []textPiece, s string) []textPiece {
	step := len(s) / longWindows
	first := len(pieces)
	sampled := 0
	for k := range longWindows {
		a := runeStart(s, k*step+(step-pieceSize)/2)
		b := runeStart(s, a+pieceSize)
		pieces = append(pieces, textPiece{s: s[a:b], owner: -1})
		sampled += b - a
	}
	scale := float64(len(s)) / float64(max(1, sampled))
	for j := first; j < len(pieces); j++ {
		pieces[j].scale = scale
	}
	return pieces
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in
// (at most three bytes).
func runeStart(s string, i int) int {
	for k := 0; k < utf8.UTFMax-1 && i > 0 && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return i
}

// countPieces tokenizes every piece, on as many cores as there are.
func countPieces(pieces []textPiece) ([]int, error) {
	counts := make([]int, len(pieces))
	if len(pieces) == 0 {
		return counts, nil
	}
	if err := tokens.Warm(); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	pool.Run(context.Background(), len(pieces), 0, func(j int) { counts[j] = tokens.MustCount(pieces[j].s) }, nil)
	return counts, nil
}
