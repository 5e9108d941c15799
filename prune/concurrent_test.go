package prune

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"ccm/ccm"
)

// TestPruneWithConcurrentWriters runs real prunes (gc and age) in a loop
// while writers store and read back. Half the writers' content was stored
// an hour ago, unreferenced, so every prune wants it gone; a writer that
// deduplicates against it must still be able to read what it stored.
func TestPruneWithConcurrentWriters(t *testing.T) {
	s, claude := testStore(t)
	writeFile(t, claude+"/projects/p/s.jsonl", "{}\n")
	ctx := context.Background()
	content := func(i int) []byte {
		return []byte(fmt.Sprintf("output %d\n%s", i, strings.Repeat("some text\n", 200+i)))
	}
	const seeded = 40
	for i := 0; i < seeded; i++ {
		putAt(t, s, string(content(i)), time.Now().Add(-2*time.Hour), ccm.PinNone)
	}
	ops := 30
	if raceEnabled {
		ops = 15
	}
	errc := make(chan error, 64)
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st, _ := ccm.Open(s.Root())
			st.LockWait = 10 * time.Second
			for i := 0; i < ops; i++ {
				c := content((w*11 + i*3) % (2 * seeded))
				k, err := st.Put(ctx, c, ccm.Source{}, ccm.PinNone, "")
				if err != nil {
					errc <- err
					return
				}
				got, err := st.Get(ctx, k)
				if err != nil || string(got) != string(c) {
					errc <- fmt.Errorf("writer %d: %s unreadable right after Put: %v", w, k, err)
					return
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
			}
		}(w)
	}
	done := make(chan struct{})
	deleted := 0
	var pw sync.WaitGroup
	pw.Add(1)
	go func() {
		defer pw.Done()
		st, _ := ccm.Open(s.Root())
		st.LockWait = 10 * time.Second
		for {
			select {
			case <-done:
				return
			default:
			}
			p, err := Prepare(ctx, st, Policy{GC: true, AgeLimit: true, MaxAge: time.Hour}, Options{ClaudeDir: claude})
			if err != nil {
				errc <- err
				return
			}
			res, err := p.Execute(ctx, nil)
			p.Close()
			if err != nil {
				errc <- err
				return
			}
			deleted += res.Deleted
		}
	}()
	wg.Wait()
	close(done)
	pw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("prunes deleted %d blobs while writers ran", deleted)
	l, err := s.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.MetaErr != nil || e.Orphan() || e.MetaMissing {
			t.Errorf("%s left inconsistent: %v orphan=%v nometa=%v", e.Key, e.MetaErr, e.Orphan(), e.MetaMissing)
		}
	}
	if len(l.Temps) != 0 {
		t.Errorf("temp files left: %v", l.Temps)
	}
}
