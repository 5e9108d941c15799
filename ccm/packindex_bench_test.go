package ccm

import (
	"context"
	"os"
	"testing"
)

// BenchmarkListPacks lists the store at $CCM_BENCH_STORE (for example one
// made by "benchstore gen-packs"): what ccm cache stats and a prune dry run
// read.
func BenchmarkListPacks(b *testing.B) {
	root := os.Getenv("CCM_BENCH_STORE")
	if root == "" {
		b.Skip("set CCM_BENCH_STORE to a store (scripts/benchstore gen-packs)")
	}
	for b.Loop() {
		s, _ := Open(root)
		if _, err := s.List(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
