package ccm

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// listKeys lists the store through a fresh Store, as another process.
func listKeys(t *testing.T, root string) map[Key]Meta {
	t.Helper()
	s, _ := Open(root)
	l, err := s.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[Key]Meta{}
	for _, e := range l.Entries {
		out[e.Key] = *e.Meta
	}
	return out
}

// The binary cache of the pack index gives the same listing as replaying
// the log, follows lines appended after it, and is ignored when damaged or
// when the log is no longer the one it was made from.
func TestIndexCache(t *testing.T) {
	defer func(n int64) { cacheEvery = n }(cacheEvery)
	cacheEvery = 1 // every replay past the cache rewrites it
	s := newStore(t)
	var cs [][]byte
	for i := range 20 {
		cs = append(cs, textBlob(500+i, 2000+i*300))
	}
	keys := putBatch(t, s, cs[:10], PinSoft)
	cache := filepath.Join(s.Root(), "packs", "index.cache")
	logPath := filepath.Join(s.Root(), "packs", "index.jsonl")
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache: %v", err)
	}
	cacheEvery = 1 << 40 // from now on, only read it
	putBatch(t, s, cs[10:], PinNone)
	get(t, s, keys[0])
	if _, err := s.SetPin(context.Background(), keys[1], PinHard, "r"); err != nil {
		t.Fatal(err)
	}
	cacheEvery = 1 << 40
	want := listKeys(t, s.Root())
	if len(want) != 20 || want[keys[0]].AccessCount != 1 || want[keys[1]].Pinned.Level != PinHard || want[keys[2]].Pinned.Level != PinSoft {
		t.Fatalf("listing with cache + tail: %d entries %+v", len(want), want[keys[1]])
	}
	// The same as a replay of the whole log.
	os.Rename(cache, cache+".saved")
	full := listKeys(t, s.Root())
	for k, m := range want {
		f := full[k]
		if !f.CreatedAt.Equal(m.CreatedAt) || !f.LastAccessAt.Equal(m.LastAccessAt) || f.Pinned.Level != m.Pinned.Level ||
			f.Pinned.Reason != m.Pinned.Reason || f.Source != m.Source || f.BytesCompressed != m.BytesCompressed || f.Lines != m.Lines {
			t.Fatalf("%s: cache %+v, log %+v", k, m, f)
		}
	}
	// A damaged cache is ignored.
	b, _ := os.ReadFile(cache + ".saved")
	b[len(b)/2] ^= 1
	os.WriteFile(cache, b, 0o600)
	if got := listKeys(t, s.Root()); !sameListing(got, want) {
		t.Fatalf("damaged cache: the listing differs")
	}
	// A log rewritten in place (same inode, same size) whose first line,
	// keys[0]'s put, became a del line does not match the cache's CRC:
	// the cache is ignored, and keys[0] is not listed.
	os.Rename(cache+".saved", cache)
	log, _ := os.ReadFile(logPath)
	first := bytes.IndexByte(log, '\n')
	del := delLine(keys[0], s.now(), "test")
	del = append(del[:len(del)-1], bytes.Repeat([]byte{' '}, first+1-len(del))...)
	copy(log, append(del, '\n'))
	os.WriteFile(logPath, log, 0o600)
	got := listKeys(t, s.Root())
	if _, ok := got[keys[0]]; ok || len(got) != 19 {
		t.Fatalf("rewritten log: %d entries, keys[0] listed: %v", len(got), ok)
	}
}

func sameListing(a, b map[Key]Meta) bool {
	if len(a) != len(b) {
		return false
	}
	for k, m := range a {
		n, ok := b[k]
		if !ok || m.Source != n.Source || m.Pinned != n.Pinned || m.AccessCount != n.AccessCount ||
			!m.LastAccessAt.Equal(n.LastAccessAt) || m.BytesUncompressed != n.BytesUncompressed {
			return false
		}
	}
	return true
}

// Listings are sorted by key as strings sort, b2s and sha256 keys mixed.
func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	hex := "0123456789abcdef"
	var es []Entry
	var want []string
	for i := range 2000 {
		n, scheme := 64, "sha256:"
		if i%3 == 0 {
			n, scheme = 16, "b2s:"
		}
		b := []byte(scheme)
		for j := 0; j < n; j++ {
			c := hex[r.Intn(16)]
			if i%7 == 0 && j < 15 {
				c = '5' // long shared prefixes: ties on the first digits
			}
			b = append(b, c)
		}
		es = append(es, Entry{Key: Key(b)})
		want = append(want, string(b))
	}
	sort.Strings(want)
	got := sortEntries(es)
	for i := range want {
		if string(got[i].Key) != want[i] {
			t.Fatalf("%d: %s, want %s", i, got[i].Key, want[i])
		}
	}
}

// A Put or a batch in another process finds content already in a pack
// from the cache's key table or the log after it, without reading the
// whole index, and does not store it again.
func TestPresenceDedup(t *testing.T) {
	defer func(n int64) { cacheEvery = n }(cacheEvery)
	cacheEvery = 1
	s := newStore(t)
	inCache := textBlob(900, 5000)
	putBatch(t, s, [][]byte{inCache}, PinNone)
	cacheEvery = 1 << 40
	inTail := textBlob(901, 5000)
	putBatch(t, s, [][]byte{inTail}, PinNone)
	packs := len(packFiles(t, s))
	for i, c := range [][]byte{inCache, inTail} {
		fresh, _ := Open(s.Root())
		p, err := fresh.newPresence()
		if err != nil || !p.maybe(KeyOf(c)) || p.maybe(KeyOf(textBlob(902, 10))) {
			t.Fatalf("%d: presence %v", i, err)
		}
		if _, err := fresh.Put(context.Background(), c, Source{}, PinSoft, ""); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadDir(filepath.Join(s.Root(), "blobs")); len(b) != 0 {
			t.Fatalf("%d: stored again as a file", i)
		}
		b := fresh.NewBatch()
		if _, err := b.Put(context.Background(), c, Source{}, PinHard, ""); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		other, _ := Open(s.Root())
		if m, err := other.Stat(KeyOf(c)); err != nil || m.Pinned.Level != PinHard {
			t.Fatalf("%d: pin %+v %v", i, m, err)
		}
	}
	if n := len(packFiles(t, s)); n != packs {
		t.Fatalf("%d packs, was %d: stored again", n, packs)
	}
	// New content from a fresh Store is stored.
	fresh, _ := Open(s.Root())
	k := put(t, fresh, string(textBlob(903, 5000)), PinNone)
	if _, err := os.Stat(filepath.Join(s.Root(), "blobs", k.Hex()+".zst")); err != nil {
		t.Fatalf("new content: %v", err)
	}
}

// A lookup that scans the log for one key's lines gives the entry a replay
// of the whole log gives, after puts, accesses, pins, seen lines and
// deletions; a deleted key is not found.
func TestScanLookupMatchesReplay(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var cs [][]byte
	for i := range 12 {
		cs = append(cs, textBlob(700+i, 3000+i*100))
	}
	keys := putBatch(t, s, cs, PinNone)
	get(t, s, keys[0])
	get(t, s, keys[0])
	s.SetPin(ctx, keys[1], PinHard, "h")
	putBatch(t, s, cs[2:4], PinSoft) // seen lines, pins raised
	unlock, _ := s.LockExclusive(ctx)
	s.Remove(keys[5])
	s.SyncDirs()
	unlock()
	full, _ := Open(s.Root())
	full.idxMu.Lock()
	if err := full.loadIndexLocked(); err != nil {
		t.Fatal(err)
	}
	full.idxMu.Unlock()
	for i, k := range keys {
		fresh, _ := Open(s.Root())
		fresh.idxMu.Lock()
		got, ok, err := fresh.scanLookup(k)
		fresh.idxMu.Unlock()
		want, wok := full.idx.entries[k]
		if err != nil || ok != wok {
			t.Fatalf("%d: found %v, want %v (%v)", i, ok, wok, err)
		}
		if !ok {
			continue
		}
		if got.loc.pack != want.loc.pack || got.loc.off != want.loc.off || got.meta.AccessCount != want.meta.AccessCount ||
			got.meta.Pinned != want.meta.Pinned || !got.meta.LastAccessAt.Equal(want.meta.LastAccessAt) {
			t.Fatalf("%d: scan %+v, replay %+v", i, got, *want)
		}
	}
	if _, ok := full.idx.entries[keys[5]]; ok {
		t.Fatal("deleted key replayed")
	}
	if want := full.idx.entries[keys[0]]; want.meta.AccessCount != 2 {
		t.Fatalf("access count %d", want.meta.AccessCount)
	}
}
