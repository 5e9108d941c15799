package prune

import (
	"context"
	"io"
	"os"
	"testing"

	"ccm/ccm"
)

// BenchmarkPlanPacks plans a size prune of the store at $CCM_BENCH_STORE
// (for example one made by "benchstore gen-packs") as "ccm prune
// --max-size-mb 500 --dry-run" does, and prints the plan.
func BenchmarkPlanPacks(b *testing.B) {
	root := os.Getenv("CCM_BENCH_STORE")
	if root == "" {
		b.Skip("set CCM_BENCH_STORE to a store (scripts/benchstore gen-packs)")
	}
	for b.Loop() {
		s, _ := ccm.Open(root)
		p, err := Prepare(context.Background(), s, Policy{SizeLimit: true, MaxBytes: 500 * MiB}, Options{DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		p.WritePlan(io.Discard, false)
		p.Close()
	}
}
