package tokens

import (
	"bufio"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tidwall/gjson"

	"ccm/internal/testutil"
)

// reference is tiktoken-go's cl100k encoder, the counts to match.
func reference(t testing.TB) *tiktoken.Tiktoken {
	t.Helper()
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestMatchesTiktokenPieces checks the hand-written pre-tokenizer and BPE
// against tiktoken-go on text made of the pieces that exercise every
// alternative of the cl100k pattern.
func TestMatchesTiktokenPieces(t *testing.T) {
	enc := reference(t)
	pieces := []string{"hello", " world", "'s", "'S", "'re", "'LL", "'x", "don't", "12345", " 7", "٣٤٥",
		"  ", "   ", "\n", "\r\n", " \n  \n ", "\t", "\u00a0", "\u3000", "!!", " ?", "...\n", "`code`",
		"Ünïcödé", "日本語", "emoji😀", "a_b", "CONTEXT_REFRESH", "~/.claude/rules", "x", "-", "—", "  x",
		"\n\n\n", "authentication", "kubernetes", " k8s", "<|endoftext|>", "\u2028", "$", "€5", "½",
		"\xff", "\xe2\x82"}
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		want := len(enc.EncodeOrdinary(strings.ToValidUTF8(s, "\uFFFD")))
		if got := MustCount(s); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken says %d", s, got, want)
		}
	}
	if got := MustCount(""); got != 0 {
		t.Errorf("Count(\"\") = %d", got)
	}
}

// corpusTexts returns the texts of the real transcripts in the corpus
// (prompts, replies, thinking, tool input and output), up to limit bytes.
func corpusTexts(t testing.TB, limit int) []string {
	t.Helper()
	var texts []string
	total := 0
	err := filepath.Walk(filepath.Join(testutil.CorpusConfigDir(t), "projects"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".jsonl") || total > limit {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() && total <= limit {
			add := func(s string) {
				if s != "" && len(s) < 64<<10 {
					texts = append(texts, s)
					total += len(s)
				}
			}
			c := gjson.GetBytes(sc.Bytes(), "message.content")
			add(c.Str)
			c.ForEach(func(_, b gjson.Result) bool {
				add(b.Get("text").Str)
				add(b.Get("thinking").Str)
				add(b.Get("content").Str)
				add(b.Get("input").Raw)
				return true
			})
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if total < 100<<10 {
		t.Fatalf("only %d bytes of text in the corpus", total)
	}
	return texts
}

// TestMatchesTiktokenCorpus: on every text of the real transcripts the
// counts are tiktoken's, also when counted on several goroutines at once.
func TestMatchesTiktokenCorpus(t *testing.T) {
	enc := reference(t)
	texts := corpusTexts(t, 3<<20)
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = len(enc.EncodeOrdinary(s))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range texts {
				j := (i + g*len(texts)/4) % len(texts)
				if got := MustCount(texts[j]); got != want[j] {
					t.Errorf("Count(%.80q…) = %d, tiktoken says %d", texts[j], got, want[j])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestLongChunk: a chunk without a break (a run of letters) is counted in
// bounded time, close to tiktoken's count.
func TestLongChunk(t *testing.T) {
	enc := reference(t)
	rng := rand.New(rand.NewSource(7))
	b := make([]byte, 6000)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.Intn(52)]
	}
	s := string(b)
	got, want := MustCount(s), len(enc.EncodeOrdinary(s))
	if d := got - want; d < 0 || d > want/50 {
		t.Errorf("Count of a %d-byte word = %d, tiktoken says %d", len(s), got, want)
	}
	// The merge is quadratic in a chunk's length; a 600 KB chunk is
	// counted in pieces (its speed is BenchmarkLongChunk's to show).
	long := strings.Repeat(s, 100)
	if n := MustCount(long); n < 100*want*9/10 {
		t.Errorf("a 600 KB chunk counts %d tokens, want about %d", n, 100*want)
	}
}

// TestHeapMerge: chunks long enough for the heap merge (words run
// together, runs of one character, base64, punctuation) count what
// tiktoken counts, exactly, up to maxPiece bytes.
func TestHeapMerge(t *testing.T) {
	enc := reference(t)
	words := strings.Fields("the quick brown fox jumps over lazy dog authentication kubernetes Ünïcödé CONTEXT REFRESH aaaa zz")
	rng := rand.New(rand.NewSource(3))
	for n := 0; n < 400; n++ {
		var b strings.Builder
		switch n % 4 {
		case 0:
			for b.Len() < heapFrom+rng.Intn(maxPiece-heapFrom) {
				b.WriteString(words[rng.Intn(len(words))])
			}
		case 1:
			b.WriteString(strings.Repeat(string("ax=!"[rng.Intn(4)]), heapFrom+rng.Intn(maxPiece-heapFrom)))
		case 2:
			for b.Len() < heapFrom+rng.Intn(maxPiece-heapFrom) {
				b.WriteByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[rng.Intn(52)])
			}
		case 3:
			for b.Len() < heapFrom+rng.Intn(maxPiece-heapFrom) {
				b.WriteByte("!#$%&()*+,-./:;<=>?@[]^_`{|}~"[rng.Intn(29)])
			}
		}
		s := b.String()
		if len(s) > maxPiece {
			s = s[:maxPiece]
		}
		// Every chunk is at most maxPiece long: the count is exact.
		if got, want := MustCount(s), len(enc.EncodeOrdinary(strings.ToValidUTF8(s, "\uFFFD"))); got != want {
			t.Fatalf("Count(%q) = %d, tiktoken says %d", s, got, want)
		}
		if scan, heap := bpeCountScan(s), bpeCountHeap(ranks, s); scan != heap {
			t.Fatalf("heap merge of %q = %d, the scan says %d", s, heap, scan)
		}
	}
}

// bpeCountScan is the merge by scan, on any length, to check the heap
// against.
func bpeCountScan(s string) int {
	piece := []byte(s)
	parts := make([]int, len(piece)+1)
	for i := range parts {
		parts[i] = i
	}
	for {
		best, at := -1, -1
		for i := 0; i+2 < len(parts); i++ {
			if r, ok := ranks[string(piece[parts[i]:parts[i+2]])]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			return len(parts) - 1
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
}

// BenchmarkLongChunk counts a 600 KB chunk of letters, which the merge,
// quadratic in a chunk's length, takes in pieces.
func BenchmarkLongChunk(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	buf := make([]byte, 600_000)
	for i := range buf {
		buf[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.Intn(52)]
	}
	s := string(buf)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MustCount(s)
	}
}
