package ccm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packStore stores 3 batches of 10 blobs (3 packs) and returns the
// contents by key.
func packStore(t *testing.T) (*Store, map[Key][]byte, [][]Key) {
	t.Helper()
	s := newStore(t)
	all := map[Key][]byte{}
	var batches [][]Key
	for b := range 3 {
		var cs [][]byte
		for i := range 10 {
			cs = append(cs, textBlob(1000+b*100+i, 3000+i*500))
		}
		keys := putBatch(t, s, cs, PinNone)
		for i, k := range keys {
			all[k] = cs[i]
		}
		batches = append(batches, keys)
	}
	return s, all, batches
}

// deleteAndPlan removes keys as prune does (exclusive lock, index first)
// and plans the repack.
func deleteAndPlan(t *testing.T, s *Store, del []Key) *RepackPlan {
	t.Helper()
	l, err := s.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	deleting := map[Key]bool{}
	for _, k := range del {
		deleting[k] = true
	}
	plan := PlanRepack(l, deleting)
	for _, k := range del {
		if _, err := s.Remove(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SyncDirs(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// checkAll reads every live blob through a fresh Store (another process)
// and checks that the deleted ones are gone and nothing is damaged.
func checkAll(t *testing.T, root string, live map[Key][]byte, gone []Key) {
	t.Helper()
	s, _ := Open(root)
	for k, want := range live {
		if err := s.Verify(k); err != nil {
			t.Fatalf("verify %s: %v", k, err)
		}
		if got, err := s.Get(context.Background(), k); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("get %s: %v", k, err)
		}
	}
	for _, k := range gone {
		if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted %s: %v", k, err)
		}
	}
	rep, err := s.VerifyAll(context.Background(), nil, nil)
	if err != nil || len(rep.Damaged) != 0 || rep.Blobs != len(live) {
		t.Fatalf("verify all: %+v %v", rep, err)
	}
}

// The plan: a pack with every blob deleted goes, a pack mostly deleted is
// rewritten (each live blob copied, with its reason), a pack barely
// touched stays; after the repack every live blob reads, the disk shrank.
func TestRepackPlanAndExecute(t *testing.T) {
	defer func(n int64) { SmallPack = n }(SmallPack)
	SmallPack = 0 // these packs are small: test the unused-share rule alone
	s, all, batches := packStore(t)
	del := append([]Key{}, batches[0]...) // pack 0: all
	del = append(del, batches[1][:7]...)  // pack 1: 7 of 10
	del = append(del, batches[2][0])      // pack 2: 1 of 10 (the smallest)
	plan := deleteAndPlan(t, s, del)
	actions := map[string]int{}
	for _, a := range plan.Packs {
		actions[a.Action]++
	}
	if actions[PackDelete] != 1 || actions[PackRewrite] != 1 || actions[PackKeep] != 1 || len(plan.Moves) != 3 {
		t.Fatalf("plan %+v", plan)
	}
	for _, m := range plan.Moves {
		if m.Reason == "" || m.Bytes <= 0 {
			t.Fatalf("move %+v", m)
		}
	}
	before := dirSize(t, s.Root()+"/packs")
	freed, err := s.Repack(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	after := dirSize(t, s.Root()+"/packs")
	if freed <= 0 || before-after < freed/2 {
		t.Fatalf("freed %d, packs %d -> %d bytes", freed, before, after)
	}
	if p := packFiles(t, s); len(p) != 2 {
		t.Fatalf("packs after repack: %v", p)
	}
	for _, k := range del {
		delete(all, k)
	}
	checkAll(t, s.Root(), all, del)
	// The repack wrote the cache of the new index: a listing from it is
	// the listing of a full replay.
	cache := filepath.Join(s.Root(), "packs", "index.cache")
	withCache := listKeys(t, s.Root())
	if err := os.Remove(cache); err != nil {
		t.Fatalf("no cache after the repack: %v", err)
	}
	if replayed := listKeys(t, s.Root()); !sameListing(withCache, replayed) || len(replayed) != len(all) {
		t.Fatal("the repack's cache differs from a replay of its index")
	}
}

func dirSize(t *testing.T, dir string) int64 {
	es, _ := os.ReadDir(dir)
	var n int64
	for _, e := range es {
		fi, _ := e.Info()
		n += fi.Size()
	}
	return n
}

// A kill -9 at every step of a repack (simulated: the repack stops with no
// clean-up) leaves every live blob readable and verified; the next repack
// finishes the job.
func TestRepackCrashAtEveryStep(t *testing.T) {
	for _, step := range []string{"copied", "indexed", "removing"} {
		t.Run(step, func(t *testing.T) {
			defer func(n int64) { SmallPack = n }(SmallPack)
			SmallPack = 0
			s, all, batches := packStore(t)
			del := append(append([]Key{}, batches[0]...), batches[1][:7]...)
			plan := deleteAndPlan(t, s, del)
			repackStop = func(at string) bool { return at == step }
			_, err := s.Repack(context.Background(), plan)
			repackStop = nil
			if !errors.Is(err, errRepackStopped) {
				t.Fatalf("repack: %v", err)
			}
			for _, k := range del {
				delete(all, k)
			}
			checkAll(t, s.Root(), all, del)
			// The next prune's plan removes what the crash left.
			s2, _ := Open(s.Root())
			l, _ := s2.List(context.Background(), nil)
			plan2 := PlanRepack(l, nil)
			if _, err := s2.Repack(context.Background(), plan2); err != nil {
				t.Fatal(err)
			}
			checkAll(t, s.Root(), all, del)
			l, _ = s2.List(context.Background(), nil)
			if st := Summarize(l); st.PackDeadBytes != 0 || st.Packs != 2 {
				t.Fatalf("after the second repack: %+v", st)
			}
		})
	}
}

// A pack truncated behind the index: its intact frames are copied, the
// damaged ones stay where they are (still reported), nothing else is lost.
func TestRepackKeepsPackWithUnreadableFrame(t *testing.T) {
	s, all, batches := packStore(t)
	del := batches[1][:7]
	pack := ""
	l, _ := s.List(context.Background(), nil)
	for _, e := range l.Entries {
		if e.Key == batches[1][9] {
			pack = e.Files[0].Path
		}
	}
	fi, _ := os.Stat(pack)
	os.Truncate(pack, fi.Size()-10) // the last frame (blob 9) is cut
	plan := deleteAndPlan(t, s, del)
	if _, err := s.Repack(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pack); err != nil {
		t.Fatalf("pack with an unreadable frame removed: %v", err)
	}
	s2, _ := Open(s.Root())
	for _, k := range del {
		delete(all, k)
	}
	for k, want := range all {
		got, err := s2.Get(context.Background(), k)
		if k == batches[1][9] {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("cut blob: %v", err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("get %s: %v", k, err)
		}
	}
}

// Small packs are merged into one: several small packs with nothing
// deleted, each blob copied with its reason; a single small pack with
// nothing else to write stays.
func TestRepackMergesSmallPacks(t *testing.T) {
	s, all, _ := packStore(t) // 3 packs of about 20 KB
	l, _ := s.List(context.Background(), nil)
	plan := PlanRepack(l, nil)
	if len(plan.Moves) != 30 {
		t.Fatalf("plan %+v", plan)
	}
	for _, a := range plan.Packs {
		if a.Action != PackRewrite || !strings.Contains(a.Reason, "small") {
			t.Fatalf("pack %+v", a)
		}
	}
	if _, err := s.Repack(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if p := packFiles(t, s); len(p) != 1 {
		t.Fatalf("packs after merging: %v", p)
	}
	checkAll(t, s.Root(), all, nil)
	l, _ = s.List(context.Background(), nil)
	if again := PlanRepack(l, nil); again.Any() {
		t.Fatalf("one small pack left alone, but the plan is %+v", again)
	}
}
