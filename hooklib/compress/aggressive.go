package compress

import (
	"strings"
	"sync"
)

// minVowelWord is the shortest word level 3 considers, as before.
const minVowelWord = 7

// vowelDecisions caches, per word, the disemvowelled form if it has fewer
// tokens than the word, or "" if it does not. Words repeat across rules and
// sessions, so a process counts each at most once.
type vowelDecisions struct {
	mu sync.Mutex
	m  map[string]string
}

// aggressiveLine is level 3 on one prose line: a plain word of at least seven
// letters loses the vowels between consonants, but only where the tokenizer
// counts fewer tokens for the result. On prose agentihooks' unconditional
// rule raised token counts by 15-29 % while lowering characters
// (docs/earlier-tools.md); most common words are one or two tokens already.
func aggressiveLine(s string, c Counter, cache *vowelDecisions) string {
	lx := lex(s)
	changed := false
	for i := range lx.toks {
		t := &lx.toks[i]
		if !t.word || t.prot || len(t.core) < minVowelWord || !isASCIILetters(t.core) || excluded(t.lower) {
			continue
		}
		// A capital inside a sentence marks a name (Redis, Postgres).
		if c0 := t.core[0]; c0 >= 'A' && c0 <= 'Z' && !sentenceStart(lx.toks, i) {
			continue
		}
		if short := cache.decide(t.core, c); short != "" {
			t.core = short
			changed = true
		}
	}
	if !changed {
		return s
	}
	return lx.String()
}

func (v *vowelDecisions) decide(word string, c Counter) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r, ok := v.m[word]; ok {
		return r
	}
	if v.m == nil {
		v.m = make(map[string]string)
	}
	short := disemvowel(word)
	// In running text a word follows a space, and that is the chunk the
	// tokenizer sees.
	if short == word || c.Count(" "+short) >= c.Count(" "+word) {
		short = ""
	}
	v.m[word] = short
	return short
}

// disemvowel deletes every run of vowels (a, e, i, o, u) that has a
// consonant on both sides; leading and trailing vowels stay, "y" is a
// consonant.
func disemvowel(w string) string {
	var b strings.Builder
	b.Grow(len(w))
	for i := 0; i < len(w); {
		if !isVowel(w[i]) || i == 0 {
			b.WriteByte(w[i])
			i++
			continue
		}
		j := i
		for j < len(w) && isVowel(w[j]) {
			j++
		}
		if j == len(w) || isVowel(w[i-1]) {
			b.WriteString(w[i:j]) // trailing vowels stay
		}
		i = j
	}
	return b.String()
}

func isVowel(c byte) bool {
	switch c | 0x20 {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// excluded reports whether w, or w without a plural or verb ending, is in
// the exclusion list.
func excluded(w string) bool {
	if vowelExclusions.has(w) || protectedWord(w) || direction.has(w) {
		return true
	}
	for _, suf := range []string{"s", "es", "ed", "d", "ing", "ion", "ions"} {
		if b, ok := strings.CutSuffix(w, suf); ok && vowelExclusions.has(b) {
			return true
		}
	}
	return false
}
