package compress

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tok is one whitespace-separated token of a prose line, split into
// leading punctuation, core and trailing punctuation.
type tok struct {
	lead, core, trail string
	lower             string // lower-case core
	prot              bool   // never changed
	dictOK            bool   // the abbreviation dictionary may replace the core
	word              bool   // core is letters only
	span              bool   // holds inline code, a URL or a quoted phrase
	deleted           bool
}

func (t *tok) text() string { return t.lead + t.core + t.trail }

// lexed is a prose line as tokens and the whitespace around them:
// seps[0] tok[0] seps[1] ... tok[n-1] seps[n].
type lexed struct {
	seps []string
	toks []tok
}

// String reassembles the line; deleted tokens drop out with the separator
// that follows them.
func (lx *lexed) String() string {
	var b strings.Builder
	b.WriteString(lx.seps[0])
	for i := range lx.toks {
		if lx.toks[i].deleted {
			continue // its following separator goes with it
		}
		b.WriteString(lx.toks[i].text())
		b.WriteString(lx.seps[i+1])
	}
	return b.String()
}

const (
	leadPunct  = "([{<\"'“‘«"
	trailPunct = ")]}>\"'”’»,;:!?."
)

// lex splits a prose line into tokens and decides which are protected.
// Spans that may contain spaces (inline code, URLs, quoted phrases) are
// found first and kept inside one token.
func lex(s string) *lexed {
	spans := findSpans(s)
	lx := &lexed{}
	i, sep := 0, 0
	si := 0
	for i <= len(s) {
		// separator
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		lx.seps = append(lx.seps, s[sep:i])
		if i >= len(s) {
			break
		}
		start, inSpan := i, false
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			for si < len(spans) && spans[si][1] <= i {
				si++
			}
			if si < len(spans) && spans[si][0] <= i {
				i = spans[si][1]
				inSpan = true
				continue
			}
			i++
		}
		lx.toks = append(lx.toks, newTok(s[start:i], inSpan))
		sep = i
	}
	markRuns(lx.toks)
	return lx
}

func newTok(text string, inSpan bool) tok {
	if inSpan {
		return tok{core: text, prot: true, span: true}
	}
	t := tok{}
	core := text
	for len(core) > 0 && strings.ContainsRune(leadPunct, firstRune(core)) {
		_, w := utf8.DecodeRuneInString(core)
		t.lead += core[:w]
		core = core[w:]
	}
	for len(core) > 0 && strings.ContainsRune(trailPunct, lastRune(core)) {
		_, w := utf8.DecodeLastRuneInString(core)
		t.trail = core[len(core)-w:] + t.trail
		core = core[:len(core)-w]
	}
	t.core = core
	t.lower = strings.ToLower(core)
	classifyTok(&t)
	return t
}

// classifyTok protects everything that is not a plain word: identifiers,
// paths, file names, globs, flags, numbers, contractions, mixed case,
// ALL_CAPS, and the listed words.
func classifyTok(t *tok) {
	c := t.core
	if c == "" {
		return
	}
	letters, hyphen, upperInside := true, false, false
	for i, r := range c {
		switch {
		case unicode.IsLetter(r):
			if i > 0 && unicode.IsUpper(r) {
				upperInside = true
			}
		case r == '-' && i > 0 && i < len(c)-1:
			hyphen = true
		default:
			letters = false
		}
	}
	switch {
	case !letters, upperInside:
		t.prot = true
	case hyphen:
		t.prot, t.dictOK = true, true
	case protectedWord(t.lower):
		t.prot = true
	default:
		t.word, t.dictOK = true, true
	}
}

// markRuns protects CLI command lines (a tool name up to the end of its
// clause) and the unit after a number ("512 MiB", "30 minutes").
func markRuns(toks []tok) {
	for i := 0; i < len(toks); i++ {
		t := &toks[i]
		if t.word && cliTools.has(t.lower) {
			for j := i; j < len(toks) && j < i+12; j++ {
				toks[j].prot, toks[j].word, toks[j].dictOK = true, false, false
				if clauseEnd(&toks[j]) || j+1 < len(toks) && toks[j+1].core == "" {
					break
				}
			}
			continue
		}
		if isNumber(t.core) && t.trail == "" && i+1 < len(toks) && toks[i+1].word {
			toks[i+1].prot, toks[i+1].word, toks[i+1].dictOK = true, false, false
		}
	}
}

// clauseEnd reports whether a token ends a clause.
func clauseEnd(t *tok) bool {
	return strings.ContainsAny(t.trail, ",;:.!?)") || t.core == "—" || t.core == "–" || t.core == "|" || t.core == "→"
}

func isNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != '.' && c != ',' && c != '%' {
			return false
		}
	}
	return true
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
func lastRune(s string) rune  { r, _ := utf8.DecodeLastRuneInString(s); return r }

// findSpans returns the byte ranges of inline code, URLs and quoted
// phrases, in order and without overlaps.
func findSpans(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		if end := spanAt(s, i); end > i {
			spans = append(spans, [2]int{i, end})
			i = end
			continue
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return spans
}

// spanAt returns the end of a protected span starting at s[i], or i.
func spanAt(s string, i int) int {
	switch c := s[i]; {
	case c == '`':
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		for j := i + n; j < len(s); {
			k := strings.IndexByte(s[j:], '`')
			if k < 0 {
				break
			}
			j += k
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == n {
				return j + m
			}
			j += m
		}
		return i + n // an unmatched run is literal, and stays as it is
	case c == 'h' || c == 'f' || c == 'w' || c == 'H' || c == 'W':
		if i > 0 && isWordByte(s[i-1]) {
			return i
		}
		rest := strings.ToLower(s[i:min(len(s), i+8)])
		for _, p := range []string{"https://", "http://", "ftp://", "file://", "www."} {
			if strings.HasPrefix(rest, p) {
				j := i
				for j < len(s) && s[j] != ' ' && s[j] != '\t' {
					j++
				}
				for j > i && strings.IndexByte(".,;:!?)'\"]>", s[j-1]) >= 0 {
					j--
				}
				return j
			}
		}
	case c == '"':
		if opensQuote(s, i) {
			if j := strings.IndexByte(s[i+1:], '"'); j > 0 {
				return i + 1 + j + 1
			}
		}
	case c == '\'':
		if opensQuote(s, i) {
			for j := i + 1; j < len(s) && j < i+200; j++ {
				if s[j] == '\'' && s[j-1] != ' ' && (j+1 == len(s) || !isWordByte(s[j+1])) {
					return j + 1
				}
			}
		}
	case strings.HasPrefix(s[i:], "“"):
		if j := strings.Index(s[i:], "”"); j > 0 {
			return i + j + len("”")
		}
	}
	return i
}

// opensQuote: a quote at the start, or after a space or an opening
// bracket, followed by a non-space. "users' data" does not open one.
func opensQuote(s string, i int) bool {
	if i+1 >= len(s) || s[i+1] == ' ' {
		return false
	}
	return i == 0 || strings.IndexByte(" \t([{/", s[i-1]) >= 0
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}
