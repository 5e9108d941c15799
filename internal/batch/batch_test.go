package batch

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

func TestSelectAppliesEachRule(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	mk := func(name string, size int, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := mk("old.jsonl", 100, 48*time.Hour)
	active := mk("active.jsonl", 100, time.Minute)
	activeNamed := mk("named.jsonl", 100, time.Minute)
	small := mk("small.jsonl", 10, 48*time.Hour)
	empty := mk("empty.jsonl", 0, 48*time.Hour)
	recent := mk("recent.jsonl", 100, 5*time.Hour)
	missing := filepath.Join(dir, "gone.jsonl")
	sel := Select([]Candidate{{old, false}, {active, false}, {activeNamed, true}, {small, false}, {empty, true}, {recent, false}, {missing, false}},
		Criteria{Now: now, Active: 2 * time.Minute, OlderThan: 0, MinSize: 50})
	if want := []string{old, activeNamed, recent}; !reflect.DeepEqual(sel.Todo, want) {
		t.Errorf("todo %v, want %v", sel.Todo, want)
	}
	if want := []string{active, small, empty}; !reflect.DeepEqual(sel.Skipped, want) {
		t.Errorf("skipped %v, want %v", sel.Skipped, want)
	}
	if len(sel.Failed) != 1 || sel.Failed[0].Path != missing || !os.IsNotExist(sel.Failed[0].Err) {
		t.Errorf("failed %+v, want the missing file", sel.Failed)
	}
	sel = Select([]Candidate{{old, false}, {recent, false}}, Criteria{Now: now, OlderThan: 24 * time.Hour})
	if want := []string{old}; !reflect.DeepEqual(sel.Todo, want) {
		t.Errorf("--older-than 24h: todo %v, want %v", sel.Todo, want)
	}
}

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
