package ccm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentWritersAndPruner runs writers (through two Store values,
// as two processes would) against a pruner that deletes every blob not
// accessed in the last minute. Half of what the writers store was seeded
// an hour ago, so the pruner wants it gone while writers deduplicate
// against it. The lock protocol guarantees that content a Put has just
// returned a key for can be read back.
func TestConcurrentWritersAndPruner(t *testing.T) {
	s1 := newStore(t)
	// The test is about what the lock protocol guarantees, not how fast
	// the lock comes: flock has no writer preference, so on a loaded
	// machine a writer can wait seconds for the pruner (it failed once
	// with "lock still held after 2s"). No wait here is a time limit.
	s1.LockWait = 10 * time.Minute
	s2, _ := Open(s1.Root())
	s2.LockWait = s1.LockWait
	ctx := context.Background()
	content := func(i int) []byte {
		return []byte(fmt.Sprintf("output %d\n%s", i, strings.Repeat("line of text\n", 100+i)))
	}
	old, _ := Open(s1.Root())
	old.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	const seeded = 30
	for i := 0; i < seeded; i++ {
		if _, err := old.Put(ctx, content(i), Source{}, PinNone, ""); err != nil {
			t.Fatal(err)
		}
	}
	ops := 40
	if raceEnabled {
		ops = 20
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, 100)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := []*Store{s1, s2}[w%2]
			for i := 0; i < ops; i++ {
				c := content((w*7 + i) % (2 * seeded)) // half seeded, half new
				k, err := s.Put(ctx, c, Source{ToolName: "Bash"}, PinLevel(i%2), "")
				if err != nil {
					errc <- err
					return
				}
				if got, err := s.Get(ctx, k); err != nil || string(got) != string(c) {
					errc <- fmt.Errorf("writer %d: %s lost right after Put: %v", w, k, err)
					return
				}
				// Writers pause as hooks do between tool calls; without gaps
				// an exclusive lock (flock has no writer preference) would
				// wait for all of them to finish.
				time.Sleep(time.Duration(i%4) * time.Millisecond)
			}
		}(w)
	}
	pruned := 0
	var pw sync.WaitGroup
	pw.Add(1)
	go func() {
		defer pw.Done()
		p, _ := Open(s1.Root())
		p.LockWait = s1.LockWait
		for {
			select {
			case <-stop:
				return
			default:
			}
			unlock, err := p.LockExclusive(ctx)
			if err != nil {
				errc <- err
				return
			}
			l, err := p.List(ctx, nil)
			if err == nil {
				for _, e := range l.Entries {
					if e.Meta != nil && e.Meta.Pinned.Level == PinNone && time.Since(e.Meta.LastAccessAt) > time.Minute {
						if _, err := p.Remove(e.Key); err == nil {
							pruned++
						}
					}
				}
			}
			unlock()
			if err != nil {
				errc <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	pw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("pruner removed %d blobs while writers ran", pruned)
	assertNoTemps(t, s1)
	l, _ := s1.List(ctx, nil)
	for _, e := range l.Entries {
		if e.MetaErr != nil || e.Orphan() {
			t.Errorf("%s: %v orphan=%v", e.Key, e.MetaErr, e.Orphan())
		}
	}
}

func TestSameContentManyWriters(t *testing.T) {
	s := newStore(t)
	c := []byte(strings.Repeat("everyone stores this\n", 300))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st, _ := Open(s.Root())
			if _, err := st.Put(context.Background(), c, Source{}, PinLevel(w%3), fmt.Sprint(w)); err != nil {
				t.Error(err)
			}
		}(w)
	}
	wg.Wait()
	m, err := s.Stat(KeyOf(c))
	if err != nil || m.Pinned.Level != PinHard {
		t.Fatalf("pin after racing writers: %+v %v (the hard pin must survive)", m, err)
	}
	assertNoTemps(t, s)
}

func TestHoldBlocksExclusive(t *testing.T) {
	s := newStore(t)
	put(t, s, "x", PinNone)
	release, err := s.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Writers still get in while it is held.
	put(t, s, "y", PinNone)
	p, _ := Open(s.Root())
	p.LockWait = 50 * time.Millisecond
	if _, err := p.LockExclusive(context.Background()); !errors.Is(err, ErrLocked) {
		t.Fatalf("exclusive while held: %v", err)
	}
	release()
	release() // twice is fine
	unlock, err := p.LockExclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// And the other way round: a writer waits, then gives up clearly.
	s.LockWait = 50 * time.Millisecond
	if _, err := s.Put(context.Background(), []byte("z"), Source{}, PinNone, ""); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "prune") {
		t.Fatalf("put while pruning: %v", err)
	}
	unlock()
}

func TestBatch(t *testing.T) {
	// 20 Puts commit with fsyncs, 40 (80 files) with one syncfs.
	for _, n := range []int{20, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testBatch(t, n) })
	}
}

func testBatch(t *testing.T, n int) {
	s := newStore(t)
	ctx := context.Background()
	b := s.NewBatch()
	var wg sync.WaitGroup
	keys := make([]Key, n)
	for i := range keys {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k, err := b.Put(ctx, []byte(fmt.Sprintf("batched %d %s", i, strings.Repeat("x\n", 600))), Source{}, PinLevel(i%3), "")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}(i)
	}
	wg.Wait()
	// Invisible until Commit: a reader never sees a blob that is not
	// durable yet.
	if _, err := s.Get(ctx, keys[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get before Commit: %v", err)
	}
	if _, err := s.LastKey(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("last_key written before Commit: %v", err)
	}
	// The batch holds the store's shared lock until Commit: no prune now.
	s.LockWait = 20 * time.Millisecond
	if _, err := s.LockExclusive(ctx); !errors.Is(err, ErrLocked) {
		t.Fatalf("exclusive lock during a batch: %v", err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.LockExclusive(ctx)
	if err != nil {
		t.Fatalf("exclusive lock after Commit: %v", err)
	}
	unlock()
	for i, k := range keys {
		if got := get(t, s, k); !strings.HasPrefix(got, fmt.Sprintf("batched %d ", i)) {
			t.Fatalf("%d: %q", i, got[:20])
		}
		if m, err := s.Stat(k); err != nil || m.Pinned.Level != PinLevel(i%3) {
			t.Fatalf("%d: pin %v (%v)", i, m, err)
		}
	}
	// One pack and one put line per new blob in the pack index.
	idx, err := os.ReadFile(filepath.Join(s.Root(), "packs", "index.jsonl"))
	if err != nil || strings.Count(string(idx), `{"op":"put"`) != n {
		t.Fatalf("packs/index.jsonl: %d put lines, want %d (%v)", strings.Count(string(idx), `{"op":"put"`), n, err)
	}
	if packs, _ := filepath.Glob(filepath.Join(s.Root(), "packs", "*.pack")); len(packs) != 1 {
		t.Fatalf("packs: %v, want one", packs)
	}
	if k, err := s.LastKey(); err != nil || k == "" {
		t.Fatalf("last_key after Commit: %v", err)
	}
	if err := b.Commit(); err != nil { // nothing left: a no-op
		t.Fatal(err)
	}
	assertNoTemps(t, s)
}

// Close gives up a batch after an error: it releases the lock, stores
// nothing (its pack is removed), and the store goes on working.
func TestBatchClose(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	b := s.NewBatch()
	k, err := b.Put(ctx, []byte(strings.Repeat("abandoned\n", 200)), Source{}, PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close() // twice is fine
	unlock, err := s.LockExclusive(ctx)
	if err != nil {
		t.Fatalf("exclusive lock after Close: %v", err)
	}
	unlock()
	if _, err := s.Get(ctx, k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("content after Close: %v", err)
	}
	if packs, _ := filepath.Glob(filepath.Join(s.Root(), "packs", "*.pack")); len(packs) != 0 {
		t.Fatalf("packs left by Close: %v", packs)
	}
	if _, err := b.Put(ctx, []byte("reused after Close"), Source{}, PinNone, ""); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashLeftEmptyFiles: an unsynced write interrupted by a crash can
// leave an empty blob or metadata file. The blob reads as corrupt and the
// next Put of the content replaces it.
func TestCrashLeftEmptyFiles(t *testing.T) {
	s := newStore(t)
	content := strings.Repeat("crash\n", 500)
	k := put(t, s, content, PinNone)
	os.Truncate(blobPath(t, s, k), 0)
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty blob: %v", err)
	}
	put(t, s, content, PinNone)
	if get(t, s, k) != content {
		t.Fatal("not healed")
	}
	// An empty metadata file is no metadata: listed as such, not as an
	// error that would stop prune, and rewritten by the next Put.
	os.WriteFile(filepath.Join(s.Root(), "meta", k.Hex()+".json"), nil, 0o600)
	l, _ := s.List(context.Background(), nil)
	if len(l.Entries) != 1 || !l.Entries[0].MetaMissing || l.Entries[0].MetaErr != nil {
		t.Fatalf("empty metadata listed as %+v", l.Entries)
	}
	put(t, s, content, PinSoft)
	if m, err := s.Stat(k); err != nil || m.Pinned.Level != PinSoft || m.BytesUncompressed != int64(len(content)) {
		t.Fatalf("rewritten metadata %+v %v", m, err)
	}
}
