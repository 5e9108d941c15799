package batch

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestRunDoesEveryItemOnceAndStopsWhenCancelled(t *testing.T) {
	var seen [100]atomic.Int32
	var done atomic.Int32
	Run(context.Background(), 100, 3, func(i int) { seen[i].Add(1) }, func() { done.Add(1) })
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("item %d ran %d times", i, seen[i].Load())
		}
	}
	if done.Load() != 100 {
		t.Errorf("done called %d times", done.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	Run(ctx, 1000, 1, func(i int) {
		if ran.Add(1) == 5 {
			cancel()
		}
	}, nil)
	if n := ran.Load(); n < 5 || n > 7 {
		t.Errorf("after cancelling at the 5th item, %d items ran", n)
	}
}

// TestRunWithOneStatePerWorker: each worker makes its state once and
// keeps it for all its items; every item runs once; no more workers start
// than there are items.
func TestRunWithOneStatePerWorker(t *testing.T) {
	var made atomic.Int32
	var seen [500]atomic.Int32
	owner := make([]*int, 500)
	RunWith(context.Background(), 500, 4, func() *int { made.Add(1); return new(int) }, func(s *int, i int) {
		*s++
		seen[i].Add(1)
		owner[i] = s
	}, nil)
	if m := made.Load(); m < 1 || m > 4 {
		t.Fatalf("%d states made for 4 workers", m)
	}
	total := 0
	states := map[*int]bool{}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("item %d ran %d times", i, seen[i].Load())
		}
		states[owner[i]] = true
	}
	for s := range states {
		total += *s
	}
	if total != 500 || len(states) > int(made.Load()) {
		t.Fatalf("states counted %d items over %d states (%d made)", total, len(states), made.Load())
	}
	made.Store(0)
	RunWith(context.Background(), 2, 16, func() int { made.Add(1); return 0 }, func(int, int) {}, nil)
	if made.Load() > 2 {
		t.Fatalf("%d workers started for 2 items", made.Load())
	}
	RunWith(context.Background(), 0, 4, func() int { t.Fatal("a worker started for no item"); return 0 }, func(int, int) {}, nil)
}
