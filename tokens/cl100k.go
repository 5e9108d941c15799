package compress

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Counter counts tokens. Compression decisions and the "never more tokens
// than the input" guard go through it, so tests can substitute a fake.
type Counter interface {
	Count(s string) int
}

// CL100K returns the process-wide cl100k_base token counter. The vocabulary
// (about 100k entries, tens of milliseconds to load) is read on the first
// Count, never before: hook paths that do not compress never pay for it.
func CL100K() Counter { return &cl100k }

var cl100k = cl100kCounter{}

// cl100kCounter counts cl100k_base tokens exactly as tiktoken does, but
// splits text with a hand-written pre-tokenizer instead of the regexp2
// pattern (which dominates tiktoken-go's run time) and caches the count of
// every chunk it has seen. Prose is made of a few thousand distinct chunks,
// so after warm-up counting is a scan plus map lookups.
type cl100kCounter struct {
	once  sync.Once
	ranks map[string]int
	err   error

	mu    sync.Mutex
	cache map[string]int
}

// maxCachedChunks bounds the chunk cache; past it the cache starts over.
const maxCachedChunks = 200_000

// Count returns the number of cl100k_base tokens in s. Invalid UTF-8 is
// counted as U+FFFD, as tiktoken does. It panics if the embedded
// vocabulary cannot be parsed, which only a broken build can cause.
func (c *cl100kCounter) Count(s string) int {
	c.once.Do(c.load)
	if c.err != nil {
		panic(c.err)
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	n := 0
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(s); {
		w := chunkLen(s, i)
		chunk := s[i : i+w]
		i += w
		k, ok := c.cache[chunk]
		if !ok {
			k = c.bpeCount([]byte(chunk))
			if len(c.cache) >= maxCachedChunks {
				c.cache = make(map[string]int, 1024)
			}
			c.cache[chunk] = k
		}
		n += k
	}
	return n
}

// load parses the cl100k_base vocabulary embedded by tiktoken-go-loader:
// one "base64(token) rank" per line.
func (c *cl100kCounter) load() {
	data, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		c.err = fmt.Errorf("load cl100k vocabulary: %w", err)
		return
	}
	ranks := make(map[string]int, 100_300)
	buf := make([]byte, 0, 64)
	for len(data) > 0 {
		line := data
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			data = nil
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		if need := base64.StdEncoding.DecodedLen(sp); cap(buf) < need {
			buf = make([]byte, need)
		} else {
			buf = buf[:need]
		}
		n, err := base64.StdEncoding.Decode(buf, line[:sp])
		if err != nil {
			c.err = fmt.Errorf("load cl100k vocabulary: %w", err)
			return
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil {
			c.err = fmt.Errorf("load cl100k vocabulary: %w", err)
			return
		}
		ranks[string(buf[:n])] = rank
	}
	c.ranks = ranks
	c.cache = make(map[string]int, 4096)
}

// bpeCount is tiktoken's byte-pair merge, counting the resulting parts.
func (c *cl100kCounter) bpeCount(piece []byte) int {
	if _, ok := c.ranks[string(piece)]; ok || len(piece) <= 1 {
		return 1
	}
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := c.ranks[string(piece[parts[i].start:parts[i+skip+2].start])]; ok {
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

// chunkLen returns the length in bytes of the cl100k pre-tokenizer chunk
// starting at s[i]. It implements, alternative by alternative and with the
// same backtracking outcome, the pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// A test checks it against tiktoken-go on generated text.
func chunkLen(s string, i int) int {
	// 1. contractions
	if s[i] == '\'' && i+1 < len(s) {
		rest := s[i+1:]
		if len(rest) >= 2 {
			two := strings.ToLower(rest[:2])
			if two == "re" || two == "ve" || two == "ll" {
				return 3
			}
		}
		switch rest[0] | 0x20 {
		case 's', 't', 'm', 'd':
			return 2
		}
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	// 2. an optional non-letter, non-digit, non-newline, then letters
	if unicode.IsLetter(r) {
		return w + letters(s, i+w)
	}
	if r != '\r' && r != '\n' && !unicode.IsNumber(r) && i+w < len(s) {
		if r2, _ := utf8.DecodeRuneInString(s[i+w:]); unicode.IsLetter(r2) {
			return w + letters(s, i+w)
		}
	}
	// 3. one to three digits
	if unicode.IsNumber(r) {
		j, n := i, 0
		for j < len(s) && n < 3 {
			rr, ww := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsNumber(rr) {
				break
			}
			j += ww
			n++
		}
		return j - i
	}
	// 4. an optional space, punctuation/symbols, trailing newlines
	j := i
	if r == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		rr, ww := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(rr) || unicode.IsLetter(rr) || unicode.IsNumber(rr) {
			break
		}
		k += ww
	}
	if k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k - i
	}
	// 5-7. whitespace runs
	end, lastNL, lastStart := i, -1, i
	for end < len(s) {
		rr, ww := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(rr) {
			break
		}
		lastStart = end
		end += ww
		if rr == '\r' || rr == '\n' {
			lastNL = end
		}
	}
	if lastNL > i {
		return lastNL - i // \s*[\r\n]+ ends at the run's last newline
	}
	if end > i {
		if end == len(s) || lastStart == i {
			return end - i // \s+(?!\S) at the end, or a lone \s+
		}
		return lastStart - i // \s+(?!\S) gives back the last space
	}
	return w
}

// letters returns the byte length of the run of letters at s[i:].
func letters(s string, i int) int {
	j := i
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += w
	}
	return j - i
}
