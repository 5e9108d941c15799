package prune

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func init() { time.Local = time.UTC } // golden files show times in UTC

var now0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func key(i int) ccm.Key { return ccm.Key(fmt.Sprintf("sha256:%064x", i)) }

// entry builds a listing entry: a blob of size bytes on disk, last accessed
// ageDays before now0, with a pin level.
func entry(i int, size int64, ageDays float64, pin ccm.PinLevel) ccm.Entry {
	at := now0.Add(-time.Duration(ageDays * 24 * float64(time.Hour)))
	ext := ".zst"
	if i%3 == 0 {
		ext = ".txt"
	}
	k := key(i)
	return ccm.Entry{
		Key:   k,
		Files: []ccm.BlobFile{{Path: "/store/blobs/" + k.Hex() + ext, Size: size}},
		Meta: &ccm.Meta{Key: k, CreatedAt: at.Add(-time.Hour), LastAccessAt: at, BytesUncompressed: 4 * size,
			Pinned: ccm.PinInfo{Level: pin}},
		MetaPath: "/store/meta/" + k.Hex() + ".json",
	}
}

// fixture is a store of 12 blobs: mixed sizes, ages and pins.
func fixture() *ccm.Listing {
	return &ccm.Listing{Entries: []ccm.Entry{
		entry(1, 100_000, 90, ccm.PinNone),
		entry(2, 250_000, 45, ccm.PinNone),
		entry(3, 50_000, 40, ccm.PinSoft),
		entry(4, 300_000, 35, ccm.PinHard),
		entry(5, 120_000, 20, ccm.PinNone),
		entry(6, 80_000, 10, ccm.PinSoft),
		entry(7, 60_000, 5, ccm.PinNone),
		entry(8, 40_000, 1, ccm.PinNone),
		entry(9, 200_000, 0.5, ccm.PinHard),
		entry(10, 10_000, 0.01, ccm.PinNone), // 14 minutes ago: inside the gc grace
		entry(11, 70_000, 60, ccm.PinSoft),
		entry(12, 5_000, 100, ccm.PinNone),
	}}
}

// refs: 2, 5 and 9 are referenced by transcripts.
var fixtureRefs = Refs{key(2): {}, key(5): {}, key(9): {}}

func TestPlansGolden(t *testing.T) {
	mb := func(f float64) int64 { return int64(f * MiB) }
	cases := []struct {
		name string
		pol  Policy
	}{
		{"gc", Policy{GC: true}},
		{"age-30", Policy{AgeLimit: true, MaxAge: 30 * 24 * time.Hour}},
		{"age-fraction", Policy{AgeLimit: true, MaxAge: time.Duration(0.75 * 24 * float64(time.Hour))}},
		{"size-1mb", Policy{SizeLimit: true, MaxBytes: mb(1)}},
		{"size-half-mb", Policy{SizeLimit: true, MaxBytes: mb(0.5)}},
		{"size-only-hard-left", Policy{SizeLimit: true, MaxBytes: mb(0.3)}},
		{"size-within", Policy{SizeLimit: true, MaxBytes: mb(2)}},
		{"all", Policy{GC: true, AgeLimit: true, MaxAge: 30 * 24 * time.Hour, SizeLimit: true, MaxBytes: mb(0.6)}},
		// --evict-referenced: the age and size rules take referenced
		// blobs too, pins and the grace period still hold.
		{"age-30-evict", Policy{AgeLimit: true, MaxAge: 30 * 24 * time.Hour, EvictReferenced: true}},
		{"size-half-mb-evict", Policy{SizeLimit: true, MaxBytes: mb(0.5), EvictReferenced: true}},
		{"all-evict", Policy{GC: true, AgeLimit: true, MaxAge: 30 * 24 * time.Hour, SizeLimit: true, MaxBytes: mb(0.6), EvictReferenced: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decide(fixture(), c.pol, now0, fixtureRefs)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			p.WritePlan(&b, true)
			b.WriteString(p.Summary(nil) + "\n")
			golden(t, filepath.Join("testdata", c.name+".golden"), b.Bytes())
			checkInvariants(t, fixture(), p)
		})
	}
}

// checkInvariants holds for every plan: every blob decided exactly once,
// hard pins never deleted, soft pins only by size, referenced blobs only
// with EvictReferenced and never by gc, blobs within the grace period
// never, sizes add up, and over the limit only what no rule may delete
// is kept, each counted once in what holds the store there.
func checkInvariants(t *testing.T, l *ccm.Listing, p *Plan) {
	t.Helper()
	seen := map[ccm.Key]int{}
	pins := map[ccm.Key]ccm.PinLevel{}
	for _, e := range l.Entries {
		pins[e.Key] = e.Meta.Pinned.Level
	}
	var after int64
	for _, d := range p.Deletions {
		seen[d.Key]++
		if pins[d.Key] == ccm.PinHard {
			t.Errorf("hard-pinned %s deleted", d.Key)
		}
		if pins[d.Key] == ccm.PinSoft && d.Rule != RuleSize {
			t.Errorf("soft-pinned %s deleted by %s", d.Key, d.Rule)
		}
		if _, ref := fixtureRefs[d.Key]; ref && (!p.Policy.EvictReferenced || d.Rule == RuleGC) {
			t.Errorf("referenced %s deleted by %s (evict %v)", d.Key, d.Rule, p.Policy.EvictReferenced)
		}
		if ref := d.Referenced; ref != hasKey(fixtureRefs, d.Key) {
			t.Errorf("%s: Referenced %v", d.Key, ref)
		}
		if d.Key == key(10) {
			t.Errorf("%s, used 14 minutes ago, deleted by %s", d.Key, d.Rule)
		}
	}
	for _, d := range p.Kept {
		seen[d.Key]++
		after += d.DiskBytes
	}
	for _, e := range l.Entries {
		if seen[e.Key] != 1 {
			t.Errorf("%s decided %d times", e.Key, seen[e.Key])
		}
	}
	if after != p.SizeAfter {
		t.Errorf("kept bytes %d, SizeAfter %d", after, p.SizeAfter)
	}
	if p.Policy.SizeLimit && p.SizeAfter > p.Policy.MaxBytes && p.OverLimit == 0 {
		t.Errorf("over the limit without saying so")
	}
	if p.Policy.SizeLimit && p.OverLimit > 0 {
		var held int64
		for _, d := range p.Kept {
			_, ref := fixtureRefs[d.Key]
			if d.Pin != ccm.PinHard && !(ref && !p.Policy.EvictReferenced) && d.Key != key(10) {
				t.Errorf("over the limit but %s (%s) kept", d.Key, d.Pin)
			}
			held += d.DiskBytes
		}
		if sum := p.HeldReferenced + p.HeldRecent + p.HeldHard; sum != held || held != p.SizeAfter {
			t.Errorf("held: referenced %d + recent %d + hard %d = %d, kept %d, after %d", p.HeldReferenced, p.HeldRecent, p.HeldHard, sum, held, p.SizeAfter)
		}
	}
}

func hasKey(r Refs, k ccm.Key) bool {
	_, ok := r[k]
	return ok
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func TestDecideRefusesBadMetadata(t *testing.T) {
	l := fixture()
	l.Entries[3].Meta, l.Entries[3].MetaErr = nil, fmt.Errorf("%w: not JSON", ccm.ErrBadMeta)
	_, err := Decide(l, Policy{SizeLimit: true, MaxBytes: 1}, now0, nil)
	if err == nil || !strings.Contains(err.Error(), "not JSON") || !strings.Contains(err.Error(), l.Entries[3].MetaPath) {
		t.Fatalf("want a clear error naming the file, got %v", err)
	}
}

func TestDecideOrphansAndTemps(t *testing.T) {
	l := fixture()
	l.Entries = append(l.Entries, ccm.Entry{Key: key(99), MetaPath: "/store/meta/x.json", Meta: &ccm.Meta{}})
	l.Temps = []ccm.TempFile{
		{Path: "/store/blobs/.a.zst.ccm-tmp-1", ModTime: now0.Add(-2 * time.Hour), Size: 10},
		{Path: "/store/blobs/.b.zst.ccm-tmp-2", ModTime: now0.Add(-time.Minute), Size: 10}, // a writer at work
	}
	p, _ := Decide(l, Policy{GC: true}, now0, fixtureRefs)
	var got []string
	for _, d := range p.Deletions {
		got = append(got, string(d.Key)+d.Path)
	}
	joined := strings.Join(got, " ")
	if !strings.Contains(joined, string(key(99))) || !strings.Contains(joined, "ccm-tmp-1") || strings.Contains(joined, "ccm-tmp-2") {
		t.Fatalf("deletions %v", got)
	}
}
