package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

var (
	once    sync.Once
	ranks   map[string]int // token bytes -> rank; read-only once loaded
	loadErr error
)

// caches hold the counts of chunks already seen, one map per goroutine
// counting at a time, so that counting on several cores takes no lock.
// Prose and code are made of a few thousand distinct chunks, so after
// warm-up counting is a scan plus map lookups. A cache past
// maxCachedChunks starts over.
var caches = sync.Pool{New: func() any { return make(map[string]int, 4096) }}

const maxCachedChunks = 200_000

// maxCachedLen is the longest chunk cached: words and symbols are
// shorter, and a chunk that long (a run of one character, an encoded
// blob) seldom comes back, so caching it would only hold its copy.
const maxCachedLen = 64

// load parses the cl100k_base vocabulary that tiktoken-go-loader embeds:
// one "base64(token) rank" per line.
func load() {
	data, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		loadErr = fmt.Errorf("load cl100k vocabulary: %w", err)
		return
	}
	m := make(map[string]int, 100_300)
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
			loadErr = fmt.Errorf("load cl100k vocabulary: %w", err)
			return
		}
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil {
			loadErr = fmt.Errorf("load cl100k vocabulary: %w", err)
			return
		}
		m[string(buf[:n])] = rank
	}
	ranks = m
}

// count splits s into cl100k chunks and counts the tokens of each, from
// the cache or by byte-pair merging.
func count(s string) int {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD") // as tiktoken decodes it
	}
	cache := caches.Get().(map[string]int)
	defer caches.Put(cache)
	n := 0
	for i := 0; i < len(s); {
		w := chunkLen(s, i)
		chunk := s[i : i+w]
		i += w
		if len(chunk) > maxCachedLen {
			n += bpeCount(ranks, chunk)
			continue
		}
		k, ok := cache[chunk]
		if !ok {
			k = bpeCount(ranks, chunk)
			if len(cache) >= maxCachedChunks {
				clear(cache)
			}
			// A copy: the key must not keep all of s alive.
			cache[strings.Clone(chunk)] = k
		}
		n += k
	}
	return n
}
