package search

import (
	"strings"
	"testing"
)

// A candidate's check finds each term's first occurrence, phrases word
// for word (repeated words included), and reports the earliest match.
func TestQueryMatch(t *testing.T) {
	for _, c := range []struct {
		terms []string
		text  string
		want  string // the text matched; "" for no match
	}{
		{[]string{"pelican"}, "The Pelican flew", "Pelican"},
		{[]string{`"a a b"`}, "a a a b c", "a a b"},
		{[]string{`"a b"`}, "a c b", ""},
		{[]string{"harbour", `"osprey lagoon"`}, "osprey  lagoon, then the harbour", "osprey  lagoon"},
		{[]string{"harbour", "missing"}, "osprey lagoon harbour", ""},
		{[]string{"foo-bar"}, "x foo.bar y", "foo.bar"},
		{[]string{"été"}, "un ÉTÉ chaud", "ÉTÉ"},
	} {
		terms, err := ParseTerms(c.terms)
		if err != nil {
			t.Fatal(err)
		}
		q := &Query{Terms: terms}
		s, e, ok := q.match(c.text)
		got := ""
		if ok {
			got = c.text[s:e]
		}
		if got != c.want {
			t.Errorf("%q in %q: matched %q, want %q", c.terms, c.text, got, c.want)
		}
	}
}

// Relevance counts every occurrence of the words, weighted by rarity, per
// length of the text.
func TestQueryScore(t *testing.T) {
	terms, _ := ParseTerms([]string{"kestrel", "dawn"})
	q := &Query{Terms: terms}
	rarity := map[string]float64{"kestrel": 2, "dawn": 1}
	dense := q.score("kestrel kestrel at dawn", rarity)
	sparse := q.score("kestrel at dawn "+strings.Repeat("filler ", 400), rarity)
	if want := 5 / (1 + 4.0/200); dense != want {
		t.Errorf("score %v, want %v", dense, want)
	}
	if sparse >= dense || sparse <= 0 {
		t.Errorf("sparse %v, dense %v", sparse, dense)
	}
	if q.score("", rarity) != 0 {
		t.Error("empty text scored")
	}
}
