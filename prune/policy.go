package prune

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"ccm/ccm"
)

// MiB is the unit of --max-size-mb: the Python tool's "MB" was 1,048,576
// bytes, and cron lines written for it keep their meaning.
const MiB = 1 << 20

// DefaultGCGrace protects new blobs from gc: a purge or hook that has just
// stored a blob may not have written the transcript that references it.
const DefaultGCGrace = time.Hour

// Policy says what to prune. The zero Policy prunes nothing.
type Policy struct {
	GC        bool          // delete unpinned blobs no transcript references
	GCGrace   time.Duration // never collect blobs stored or used this recently; 0 means DefaultGCGrace
	AgeLimit  bool          // delete unpinned blobs not accessed within MaxAge
	MaxAge    time.Duration
	SizeLimit bool  // delete until the blobs' bytes on disk are at most MaxBytes
	MaxBytes  int64 // bytes
}

// Any reports whether the policy asks for anything.
func (p Policy) Any() bool { return p.GC || p.AgeLimit || p.SizeLimit }

func (p Policy) grace() time.Duration {
	if p.GCGrace > 0 {
		return p.GCGrace
	}
	return DefaultGCGrace
}

// Rules, in the order they apply.
const (
	RuleGC   = "gc"
	RuleAge  = "age"
	RuleSize = "size"
)

// Decision is the plan for one blob (or leftover file): delete it, by which
// rule and why, or keep it and why.
type Decision struct {
	Key        ccm.Key      `json:"key,omitempty"`
	Path       string       `json:"path,omitempty"` // leftover temp files, which have no key
	Delete     bool         `json:"delete"`
	Rule       string       `json:"rule,omitempty"` // for deletions: gc, age or size
	Reason     string       `json:"reason"`
	Pin        ccm.PinLevel `json:"pin"`
	DiskBytes  int64        `json:"bytes_on_disk"`
	LastAccess time.Time    `json:"last_access,omitzero"`
}

// Refs is the set of keys that transcripts reference.
type Refs map[ccm.Key]struct{}

// Plan is the outcome of Decide: deletions in the order they run, then
// what is kept, each with its reason.
type Plan struct {
	Now        time.Time  `json:"now"`
	Policy     Policy     `json:"-"`
	Deletions  []Decision `json:"deletions"`
	Kept       []Decision `json:"kept"`
	Blobs      int        `json:"blobs"`                // blobs in the store before
	SizeBefore int64      `json:"bytes_before"`         // their bytes on disk
	SizeAfter  int64      `json:"bytes_after"`          // after the plan
	OverLimit  int64      `json:"over_limit,omitempty"` // bytes over MaxBytes that only hard pins hold
	Scan       *ScanStats `json:"gc_scan,omitempty"`
	// Repack is what happens to the packs once the deletions are durable:
	// packs left without a live blob go, packs with enough unused bytes
	// are rewritten, each copied blob with its reason.
	Repack *ccm.RepackPlan `json:"repack,omitempty"`
	Root   string          `json:"store"` // paths in the plan are shown relative to it

	st        *ccm.Store
	unlock    func()
	exclusive bool
}

// item is one blob during planning.
type item struct {
	e      *ccm.Entry
	pin    ccm.PinLevel
	access time.Time // last access (creation when unknown)
	at     int64     // access in Unix nanoseconds, for sorting
	newest time.Time // the later of creation and last access
	size   int64
	keep   string // reason it is kept, from the last rule that looked at it
}

// Decide plans a prune. It is a pure function of its arguments; refs is
// consulted only when pol.GC is set. Entries whose metadata cannot be read
// make it fail: without the pin level no decision is safe.
func Decide(l *ccm.Listing, pol Policy, now time.Time, refs Refs) (*Plan, error) {
	p := &Plan{Now: now, Policy: pol}
	live := make([]*item, 0, len(l.Entries))
	items := make([]item, len(l.Entries)) // one allocation, not one per blob
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.MetaErr != nil {
			return nil, fmt.Errorf("%s: %w (prune needs every pin level; fix or move the file away)", metaName(e), e.MetaErr)
		}
		if e.Orphan() {
			if pol.GC {
				p.Deletions = append(p.Deletions, Decision{Key: e.Key, Path: e.MetaPath, Delete: true, Rule: RuleGC,
					Reason: "metadata without a blob"})
			} else {
				p.Kept = append(p.Kept, Decision{Key: e.Key, Path: e.MetaPath, Reason: "metadata without a blob (--gc-unreferenced removes it)"})
			}
			continue
		}
		it := &items[i]
		*it = item{e: e, pin: e.Meta.Pinned.Level, size: e.DiskBytes(), access: e.Meta.LastAccessAt, keep: "no rule applies"}
		if it.access.IsZero() {
			it.access = e.Meta.CreatedAt
		}
		it.at = it.access.UnixNano()
		it.newest = it.access
		if e.Meta.CreatedAt.After(it.newest) {
			it.newest = e.Meta.CreatedAt
		}
		live = append(live, it)
		p.Blobs++
		p.SizeBefore += it.size
	}
	if pol.GC {
		for _, t := range l.Temps {
			if now.Sub(t.ModTime) > pol.grace() {
				p.Deletions = append(p.Deletions, Decision{Path: t.Path, Delete: true, Rule: RuleGC, DiskBytes: t.Size,
					LastAccess: t.ModTime, Reason: "temp file left by an interrupted write"})
			}
		}
	}
	if pol.GC {
		live = p.gc(live, refs, now)
	}
	if pol.AgeLimit {
		live = p.age(live, now)
	}
	if pol.SizeLimit {
		live = p.size(live)
	}
	for _, it := range live {
		p.SizeAfter += it.size
		p.Kept = append(p.Kept, it.decision(false, "", it.keep))
	}
	// The listing is sorted by key and the rules keep its order, so this
	// sort is usually a check.
	byKey := func(a, b Decision) int { return strings.Compare(string(a.Key), string(b.Key)) }
	if !slices.IsSortedFunc(p.Kept, byKey) {
		slices.SortStableFunc(p.Kept, byKey)
	}
	return p, nil
}

func metaName(e *ccm.Entry) string {
	if e.MetaPath != "" {
		return e.MetaPath
	}
	return string(e.Key)
}

func (it *item) decision(del bool, rule, reason string) Decision {
	return Decision{Key: it.e.Key, Delete: del, Rule: rule, Reason: reason, Pin: it.pin, DiskBytes: it.size, LastAccess: it.access}
}

func (p *Plan) drop(it *item, rule, reason string) {
	p.Deletions = append(p.Deletions, it.decision(true, rule, reason))
}

// gc deletes unpinned blobs that no transcript mentions and that were not
// stored or used within the grace period.
func (p *Plan) gc(live []*item, refs Refs, now time.Time) []*item {
	var out, del []*item
	grace := p.Policy.grace()
	for _, it := range live {
		_, referenced := refs[it.e.Key]
		switch {
		case referenced:
			it.keep = "referenced by a transcript or backup"
		case it.pin != ccm.PinNone:
			it.keep = it.pin.String() + "-pinned (gc never deletes pinned blobs)"
		case now.Sub(it.newest) < grace:
			it.keep = fmt.Sprintf("unreferenced but stored or used within the last %s", fmtDur(grace))
		default:
			del = append(del, it)
			continue
		}
		out = append(out, it)
	}
	sort.Slice(del, func(i, j int) bool { return del[i].e.Key < del[j].e.Key })
	for _, it := range del {
		p.drop(it, RuleGC, "no transcript or backup references it")
	}
	return out
}

// age deletes unpinned blobs whose last access is older than MaxAge.
func (p *Plan) age(live []*item, now time.Time) []*item {
	cutoff := now.Add(-p.Policy.MaxAge)
	limit := fmtDays(p.Policy.MaxAge)
	var out, del []*item
	for _, it := range live {
		switch {
		case it.pin != ccm.PinNone:
			it.keep = it.pin.String() + "-pinned (age never deletes pinned blobs)"
		case it.access.IsZero():
			it.keep = "no access time recorded"
		case it.access.Before(cutoff):
			del = append(del, it)
			continue
		default:
			it.keep = "accessed within " + limit
		}
		out = append(out, it)
	}
	sortOldest(del)
	for _, it := range del {
		p.drop(it, RuleAge, "not accessed for more than "+limit)
	}
	return out
}

// size deletes oldest-accessed blobs, unpinned before soft-pinned, until
// the bytes on disk fit MaxBytes. Hard-pinned blobs are never deleted; if
// they alone exceed the limit, the plan says so in OverLimit.
func (p *Plan) size(live []*item) []*item {
	var total int64
	for _, it := range live {
		total += it.size
	}
	limit := p.Policy.MaxBytes
	if total <= limit {
		for _, it := range live {
			it.keep = "store within the size limit"
		}
		return live
	}
	var unpinned, soft []*item
	for _, it := range live {
		switch it.pin {
		case ccm.PinNone:
			unpinned = append(unpinned, it)
		case ccm.PinSoft:
			soft = append(soft, it)
		default:
			it.keep = "hard-pinned (never pruned)"
		}
	}
	sortOldest(unpinned)
	sortOldest(soft)
	gone := map[*item]bool{}
	for _, group := range []struct {
		items  []*item
		reason string
	}{
		{unpinned, "over the size limit, oldest access first"},
		{soft, "over the size limit after every unpinned blob, soft pins oldest access first"},
	} {
		for _, it := range group.items {
			if total <= limit {
				it.keep = "store within the size limit after the deletions above"
				continue
			}
			total -= it.size
			gone[it] = true
			p.drop(it, RuleSize, group.reason)
		}
	}
	if total > limit {
		p.OverLimit = total - limit
	}
	out := live[:0]
	for _, it := range live {
		if !gone[it] {
			out = append(out, it)
		}
	}
	return out
}

// sortOldest orders by last access, oldest first; ties by key so plans are
// reproducible.
func sortOldest(items []*item) {
	// Keys are unique, so the order is total and a plain (faster than
	// stable, reflection-free) sort gives the same plan.
	slices.SortFunc(items, func(a, b *item) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return strings.Compare(string(a.e.Key), string(b.e.Key))
	})
}

// Counts returns the number of deletions per rule.
func (p *Plan) Counts() (gc, age, size int) {
	for _, d := range p.Deletions {
		switch d.Rule {
		case RuleGC:
			gc++
		case RuleAge:
			age++
		case RuleSize:
			size++
		}
	}
	return
}

// DeleteBytes is the bytes on disk the plan frees.
func (p *Plan) DeleteBytes() int64 {
	var n int64
	for _, d := range p.Deletions {
		n += d.DiskBytes
	}
	return n
}

func fmtDays(d time.Duration) string {
	days := d.Hours() / 24
	if days == float64(int64(days)) {
		if days == 1 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", int64(days))
	}
	return fmt.Sprintf("%g days", days)
}

func fmtDur(d time.Duration) string {
	if d == time.Hour {
		return "hour"
	}
	return d.String()
}
