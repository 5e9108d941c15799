package compress

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// standardLine is level 2 on one prose line: filler words go where that
// cannot change what the line says, long spellings are abbreviated, and
// runs of spaces between words shrink to one. Leading indentation stays
// (it nests lists), and nothing protected is touched.
func standardLine(s string, d *Dict, c Counter) string {
	lx := lex(s)
	toks := lx.toks
	for i := range toks {
		if deletable(toks, i) {
			toks[i].deleted = true
		}
	}
	abbreviate(lx, d, c)
	for i := 1; i < len(lx.seps)-1; i++ {
		if len(lx.seps[i]) > 1 {
			lx.seps[i] = " "
		}
	}
	return lx.String()
}

// deletable decides whether filler word i may go. agentihooks deleted
// every filler between two spaces and so turned "Turn on the audit log"
// into "Turn audit log", "users can't opt in to the beta" into "users
// can't opt beta" and "Be concise." into "concise.". Here a filler
// stays when it
//   - starts a sentence or ends a line or clause (imperatives, particles);
//   - follows a negation or, for be/been/being, a modal ("must not be
//     dropped", "must be set");
//   - is a direction word next to another direction or negation word
//     ("opt in to", "turn it on in staging");
//   - is "on" (it pairs with "off", which is not a filler);
//   - is "to" after an action or motion verb or in a clause with "from"
//     ("deploy to production", "from staging to production");
//   - is "with" in a clause with a pairing verb ("replace X with Y");
//   - is "at" before a quantifier ("at least 3").
func deletable(toks []tok, i int) bool {
	t := &toks[i]
	if !t.word || t.prot || !fillers.has(t.lower) || t.lead != "" || t.trail != "" {
		return false
	}
	if sentenceStart(toks, i) || i+1 >= len(toks) || toks[i+1].core == "" {
		return false
	}
	prev, next := toks[i-1].lower, toks[i+1].lower
	if negation.has(prev) {
		return false
	}
	switch t.lower {
	case "be", "been", "being":
		return !modals.has(prev) && prev != "to"
	case "on":
		return false
	case "to":
		return !nearDirection(prev, next) && !actionVerbs.has(prev) && !motionVerbs.has(prev) && !clauseHas(toks, i, fromWord)
	case "in":
		return !nearDirection(prev, next) && !inVerbs.has(prev)
	case "with":
		return !nearDirection(prev, next) && !clauseHas(toks, i, pairVerbs)
	case "at":
		return !nearDirection(prev, next) && !quantifierAfterAt.has(next)
	case "of":
		return !ofPhrases.has(prev)
	}
	return true
}

// inVerbs take "in" as a particle: "opt in", "log in".
var inVerbs = &wordSet{words: []string{"opt", "opted", "log", "logged", "sign", "signed", "check", "checked", "plug", "plugged",
	"fill", "filled", "phase", "phased", "lock", "locked", "build", "built", "bake", "baked", "roll",
	"rolled", "turn", "turned", "hand", "handed", "break", "factor", "factored"}}

// ofPhrases end in "of": "out of memory" is not "out memory".
var ofPhrases = &wordSet{words: []string{"out", "instead", "because", "ahead", "regardless", "inside", "outside", "none", "most",
	"least", "all"}}

// fromWord is the clause word that keeps "to" after a motion verb.
var fromWord = &wordSet{words: []string{"from"}}

func nearDirection(prev, next string) bool {
	return direction.has(prev) || direction.has(next) || negation.has(next)
}

// sentenceStart reports whether token i starts a sentence: nothing but
// markers before it on the line, or sentence punctuation right before it.
func sentenceStart(toks []tok, i int) bool {
	if i == 0 {
		return true
	}
	p := &toks[i-1]
	if strings.ContainsAny(p.trail, ".!?:;") {
		return true
	}
	for k := i - 1; k >= 0; k-- {
		if hasLetter(toks[k].core) {
			return false
		}
	}
	return true
}

// clauseHas reports whether the clause around token i holds one of words.
func clauseHas(toks []tok, i int, words *wordSet) bool {
	for k := i - 1; k >= 0; k-- {
		if clauseEnd(&toks[k]) {
			break
		}
		if words.has(toks[k].lower) {
			return true
		}
	}
	for k := i + 1; k < len(toks); k++ {
		if words.has(toks[k].lower) {
			return true
		}
		if clauseEnd(&toks[k]) {
			break
		}
	}
	return false
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// abbreviate replaces dictionary words and phrases. Keys are matched on
// whole tokens, longest phrase first; a phrase's words must be separated
// by single spaces with no punctuation between them. An abbreviation is
// not used
//   - if it would read as a protected word: "Delete the deployment" must
//     not become "Delete deploy" (as it did in agentihooks);
//   - if it costs more tokens than the words it replaces: for cl100k
//     "kubernetes" is 2 tokens and "k8s" 3, "staging" 1 and "stg" 2. agentihooks
//     applied them anyway, which is part of why its level 2
//     saved so little.
func abbreviate(lx *lexed, d *Dict, c Counter) {
	toks := lx.toks
	for i := 0; i < len(toks); i++ {
		if toks[i].deleted || !toks[i].dictOK {
			continue
		}
		for n := min(d.maxWords, len(toks)-i); n >= 1; n-- {
			key, ok := phrase(lx, i, n)
			if !ok {
				continue
			}
			abbr, ok := d.Lookup(key)
			if !ok || protectedWord(strings.ToLower(abbr)) {
				continue
			}
			first := &toks[i]
			if r, _ := utf8.DecodeRuneInString(first.core); unicode.IsUpper(r) {
				ar, w := utf8.DecodeRuneInString(abbr)
				abbr = string(unicode.ToUpper(ar)) + abbr[w:]
			}
			if c.Count(" "+abbr) > c.Count(" "+spanText(lx, i, n)) {
				continue
			}
			first.core = abbr
			if n > 1 {
				first.trail = toks[i+n-1].trail
				for k := i + 1; k < i+n; k++ {
					toks[k].deleted = true
				}
				lx.seps[i+1] = lx.seps[i+n]
			}
			i += n - 1
			break
		}
	}
}

// spanText returns the cores of tokens i..i+n-1 as they stand in the text.
func spanText(lx *lexed, i, n int) string {
	if n == 1 {
		return lx.toks[i].core
	}
	var b strings.Builder
	for k := i; k < i+n; k++ {
		if k > i {
			b.WriteString(lx.seps[k])
		}
		b.WriteString(lx.toks[k].core)
	}
	return b.String()
}

// phrase joins the lower-case cores of tokens i..i+n-1 if they can form a
// dictionary key.
func phrase(lx *lexed, i, n int) (string, bool) {
	toks := lx.toks
	if n == 1 {
		return toks[i].lower, true
	}
	var b strings.Builder
	for k := i; k < i+n; k++ {
		t := &toks[k]
		if t.deleted || !t.dictOK || (k > i && t.lead != "") || (k < i+n-1 && t.trail != "") {
			return "", false
		}
		if k > i {
			if lx.seps[k] != " " {
				return "", false
			}
			b.WriteByte(' ')
		}
		b.WriteString(t.lower)
	}
	return b.String(), true
}
