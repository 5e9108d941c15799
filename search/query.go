package search

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"
	"unicode"

	"ccm/internal/textindex"
)

// Query is what to look for and where.
type Query struct {
	// Terms are the words and phrases that must all appear in one
	// message: each a sequence of words that must appear in that order,
	// next to each other (one word for a plain word).
	Terms [][]string
	// Regex, when set, replaces Terms: a message matches when the
	// expression matches its text (Go's linear-time engine).
	Regex *regexp.Regexp

	Kinds    uint8     // textindex.Kind* bits; 0 for all
	Tool     string    // a tool's name (case-insensitive); "" for any
	Since    time.Time // messages at or after; zero for all
	Archived bool      // only archived sessions
	Live     bool      // only live sessions
	Session  string    // a session id or a unique prefix of one (4 characters or more)
	Project  string    // a project's path or folder
	Limit    int       // the most hits to return; 0 for 20
	// Remote, when set (s3://BUCKET/PREFIX), searches the archives
	// indexed from that object storage (Sources.Remote), and nothing else;
	// when empty, those are left out.
	Remote string
	// Unarchive is the command a hit's resume line brings an archived
	// session back with, before its id ("ccm unarchive" when empty).
	Unarchive string
	// Relevance orders hits by how densely they hold the words instead
	// of by time.
	Relevance bool
	// Redact blanks matching text before matching and in snippets.
	Redact []*regexp.Regexp
}

// ErrNoWords is returned for a query with nothing searchable in it.
var ErrNoWords = errors.New("the query has no words to search for (letters or digits)")

// ParseTerms reads a query: words, and "quoted phrases"; an argument
// holding white space is a phrase too (it was quoted in the shell). A word
// with punctuation inside (a.b.c, foo-bar) is a phrase of its parts.
func ParseTerms(args []string) ([][]string, error) {
	var terms [][]string
	add := func(s string) {
		if w := textindex.Words(s); len(w) > 0 {
			terms = append(terms, w)
		}
	}
	for _, a := range args {
		if strings.IndexFunc(a, unicode.IsSpace) >= 0 && !strings.Contains(a, `"`) {
			add(a)
			continue
		}
		for i, part := range strings.Split(a, `"`) {
			if i%2 == 1 {
				add(part) // inside quotes
				continue
			}
			for _, f := range strings.Fields(part) {
				add(f)
			}
		}
	}
	if len(terms) == 0 {
		return nil, ErrNoWords
	}
	return terms, nil
}

// CompileRegex compiles a --regex pattern.
func CompileRegex(expr string) (*regexp.Regexp, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, ErrNoWords
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("--regex %q: %s", expr, se.Code)
		}
		return nil, fmt.Errorf("--regex %q: %v", expr, err)
	}
	return re, nil
}

// keys are the index keys a query's candidates must all hold. For a
// regular expression they are the words that its required literals hold
// whole (not at a literal's edge, where the match may start mid-word);
// none means every message is a candidate.
func (q *Query) keys() []uint64 {
	var words []string
	if q.Regex != nil {
		words = regexWords(q.Regex.String())
	} else {
		for _, t := range q.Terms {
			words = append(words, t...)
		}
	}
	seen := map[uint64]bool{}
	var out []uint64
	for _, w := range words {
		k := textindex.Key(w)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func regexWords(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	var lits []string
	var required func(r *syntax.Regexp)
	required = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			lits = append(lits, string(r.Rune))
		case syntax.OpConcat:
			for _, s := range r.Sub {
				required(s)
			}
		case syntax.OpCapture, syntax.OpPlus:
			required(r.Sub[0])
		case syntax.OpRepeat:
			if r.Min >= 1 {
				required(r.Sub[0])
			}
		}
	}
	required(re.Simplify())
	var words []string
	for _, l := range lits {
		for _, s := range textindex.WordSpans(l) {
			if s.Start > 0 && s.End < len(l) {
				words = append(words, s.Word)
			}
		}
	}
	return words
}

// match reports whether text matches the query, and where its first
// match is. The words are read once, as a stream, and none is kept: a
// candidate may be a 60 MB message.
func (q *Query) match(text string) (start, end int, ok bool) {
	if q.Regex != nil {
		loc := q.Regex.FindStringIndex(text)
		if loc == nil {
			return 0, 0, false
		}
		return loc[0], loc[1], true
	}
	longest := 0
	for _, t := range q.Terms {
		longest = max(longest, len(t))
	}
	if longest == 0 {
		return 0, 0, false
	}
	// starts holds the start of the last longest words, a ring; run[i][j]
	// tells that the last j+1 words are the first j+1 of term i.
	starts := make([]int, longest)
	run := make([][]bool, len(q.Terms))
	found := make([][2]int, len(q.Terms))
	left := len(q.Terms)
	for i, t := range q.Terms {
		run[i] = make([]bool, len(t))
		found[i] = [2]int{-1, -1}
	}
	n := 0
	textindex.EachWord(text, func(w []byte, s, e int) {
		if left == 0 {
			return
		}
		starts[n%longest] = s
		n++
		for i, t := range q.Terms {
			if found[i][0] >= 0 {
				continue
			}
			r := run[i]
			for j := len(t) - 1; j > 0; j-- {
				r[j] = r[j-1] && string(w) == t[j]
			}
			r[0] = string(w) == t[0]
			if r[len(t)-1] {
				found[i] = [2]int{starts[(n-len(t))%longest], e}
				left--
			}
		}
	})
	if left > 0 {
		return 0, 0, false
	}
	start, end = -1, -1
	for _, f := range found {
		if start < 0 || f[0] < start {
			start, end = f[0], f[1]
		}
	}
	return start, end, true
}

// score is how densely text holds the query's words: occurrences per
// word of text, weighted by how rare each word is in the index.
func (q *Query) score(text string, rarity map[string]float64) float64 {
	var s float64
	words := 0
	textindex.EachWord(text, func(w []byte, _, _ int) {
		words++
		for _, t := range q.Terms {
			for _, tw := range t {
				if string(w) == tw {
					s += rarity[tw]
				}
			}
		}
	})
	if words == 0 {
		return 0
	}
	return s / (1 + float64(words)/200)
}
