package compress

import (
	"math/rand"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// TestCL100KMatchesTiktoken checks the hand-written pre-tokenizer and BPE
// against tiktoken-go on text made of the pieces that exercise every
// alternative of the cl100k pattern.
func TestCL100KMatchesTiktoken(t *testing.T) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"hello", " world", "'s", "'S", "'re", "'LL", "'x", "don't", "12345", " 7", "٣٤٥",
		"  ", "   ", "\n", "\r\n", " \n  \n ", "\t", "\u00a0", "\u3000", "!!", " ?", "...\n", "`code`",
		"Ünïcödé", "日本語", "emoji😀", "a_b", "CONTEXT_REFRESH", "~/.claude/rules", "x", "-", "—", "  x",
		"\n\n\n", "authentication", "kubernetes", " k8s", "<|endoftext|>", "\u2028", "$", "€5", "½"}
	rng := rand.New(rand.NewSource(1))
	c := &cl100kCounter{}
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		want := len(enc.EncodeOrdinary(s))
		if got := c.Count(s); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken says %d", s, got, want)
		}
	}
	for _, s := range []string{sampleClearance, ""} {
		if got, want := c.Count(s), len(enc.EncodeOrdinary(s)); got != want {
			t.Fatalf("Count(sample) = %d, tiktoken says %d", got, want)
		}
	}
}
