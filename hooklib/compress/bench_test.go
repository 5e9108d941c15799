package compress

import (
	"strings"
	"testing"
)

// input8K is 8,000 characters of rule-like markdown, the size of a full
// refresh budget. agentihooks' preprocessor took about 107 ms for this at
// level 2.
func input8K() string {
	var b strings.Builder
	for b.Len() < 8000 {
		for _, s := range tokenSamples {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	return string([]rune(b.String())[:8000])
}

func benchmarkLevel(b *testing.B, l Level) {
	in := input8K()
	c := New(Options{Level: l})
	c.Compress(in) // warm-up: loads cl100k, fills the chunk and word caches
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Compress(in)
	}
}

func BenchmarkCompress8KLight(b *testing.B)      { benchmarkLevel(b, Light) }
func BenchmarkCompress8KStandard(b *testing.B)   { benchmarkLevel(b, Standard) }
func BenchmarkCompress8KAggressive(b *testing.B) { benchmarkLevel(b, Aggressive) }
