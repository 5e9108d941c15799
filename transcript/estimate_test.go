package transcript

import (
	"bytes"
	"math"
	"testing"

	"ccm/synth"
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
