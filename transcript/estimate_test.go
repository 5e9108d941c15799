package transcript

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// TestSampledEstimate: beyond EstimateBudget the estimate tokenizes a
// sample and scales it. On generated sessions of several megabytes of
// mixed text (prose, code, logs, JSON inputs) it must stay within 10 % of
// counting every text, and below the budget it must be exact.
func TestSampledEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes several megabytes")
	}
	for _, seed := range []int64{3, 17} {
		var buf bytes.Buffer
		if _, err := synth.Generate(&buf, synth.Options{Seed: seed, TargetBytes: 6 << 20, Thinking: true}); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		ix, err := Build(bytes.NewReader(data), BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		msgs := ix.Messages(ix.ActiveChain())
		ra := bytes.NewReader(data)
		sampled, err := ix.estimateContext(ra, msgs, EstimateBudget)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := ix.estimateContext(ra, msgs, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		if !sampled.Sampled || exact.Sampled {
			t.Fatalf("seed %d: sampled %v, exact %v: the session is not larger than the budget (%d bytes of text)", seed, sampled.Sampled, exact.Sampled, exact.Bytes)
		}
		errPct := 100 * math.Abs(float64(sampled.Tokens-exact.Tokens)) / float64(exact.Tokens)
		t.Logf("seed %d: %d bytes of text, %d tokens exact, %d sampled (%.1f %% off)", seed, exact.Bytes, exact.Tokens, sampled.Tokens, errPct)
		if errPct > 10 {
			t.Errorf("seed %d: sampled estimate %d is %.1f %% off the exact %d", seed, sampled.Tokens, errPct, exact.Tokens)
		}
		// Texts outside the sample are measured escaped, not decoded.
		if d := math.Abs(float64(sampled.Bytes-exact.Bytes)) / float64(exact.Bytes); d > 0.05 || sampled.Images != exact.Images {
			t.Errorf("seed %d: sampled covers %d bytes and %d images, exact %d and %d", seed, sampled.Bytes, sampled.Images, exact.Bytes, exact.Images)
		}
	}
	// Under the budget nothing is sampled: the two counts are the same.
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Options{Seed: 5, Turns: 4}); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(bytes.NewReader(buf.Bytes()), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := ix.Messages(ix.ActiveChain())
	a, _ := ix.estimateContext(bytes.NewReader(buf.Bytes()), msgs, EstimateBudget)
	b, _ := ix.estimateContext(bytes.NewReader(buf.Bytes()), msgs, math.MaxInt64)
	if a != b || a.Sampled || a.Tokens == 0 {
		t.Errorf("small session: %+v vs exact %+v", a, b)
	}
}

// TestLongTextEstimate: one text longer than the budget (a tool output
// of tens of megabytes) is counted on windows and scaled; the estimate
// stays within 1 % of counting all of it, for prose, for base64 and for
// a run of one character, on both the index's estimate and the purge's
// Counter.
func TestLongTextEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes several megabytes")
	}
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 3<<20)
	rand.New(rand.NewSource(9)).Read(random)
	texts := map[string]string{
		"prose":  strings.Repeat(string(readme), 1+(2<<20)/len(readme)),
		"base64": base64.StdEncoding.EncodeToString(random),
		"one":    strings.Repeat("x", 3<<20),
	}
	for name, s := range texts {
		msg, _ := json.Marshal(s)
		line := `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":` + string(msg) + `},"uuid":"u1"}` + "\n"
		ix, err := Build(strings.NewReader(line), BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		msgs := ix.Messages(ix.ActiveChain())
		ra := strings.NewReader(line)
		sampled, err := ix.estimateContext(ra, msgs, EstimateBudget)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := ix.estimateContext(ra, msgs, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		if !sampled.Sampled || exact.Sampled || sampled.Bytes != int64(len(s)) || exact.Bytes != int64(len(s)) {
			t.Fatalf("%s: sampled %+v, exact %+v, text %d bytes", name, sampled, exact, len(s))
		}
		c := NewCounter(int64(len(line)), 1)
		c.Add(NewRecord([]byte(line)))
		counted, err := c.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []Estimate{sampled, counted} {
			off := 100 * math.Abs(float64(got.Tokens-exact.Tokens)) / float64(exact.Tokens)
			t.Logf("%s: %d bytes, %d tokens exact, %d estimated (%.2f %% off)", name, len(s), exact.Tokens, got.Tokens, off)
			if off > 1 || !got.Sampled {
				t.Errorf("%s: estimate %+v is %.2f %% off the exact %d tokens", name, got, off, exact.Tokens)
			}
		}
	}
}
