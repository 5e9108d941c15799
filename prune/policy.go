package prune

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"ccm/ccm"
	"ccm/internal/ui"
)

// MiB is the unit of --max-size-mb: claude-context-manager's "MB" was 1,048,576
// bytes, and cron lines written for it keep their meaning.
const MiB = 1 << 20

// DefaultGCGrace protects new blobs from gc: a purge or hook that has just
// stored a blob may not have written the transcript that references it.
const DefaultGCGrace = time.Hour

// Policy says what to prune. The zero Policy prunes nothing.
//
// A blob that a transcript, a purge backup or an archive references is
// part of its session: no rule deletes it unless EvictReferenced is set,
// and then only the age and size rules (gc is by definition about blobs
// nothing references). Pins keep their meaning for what is not
// referenced, and for what EvictReferenced would delete.
type Policy struct {
	GC        bool          // delete unpinned blobs no transcript references
	GCGrace   time.Duration // never delete blobs stored or used this recently; 0 means DefaultGCGrace
	AgeLimit  bool          // delete unpinned blobs not accessed within MaxAge
	MaxAge    time.Duration
	SizeLimit bool  // delete until the blobs' bytes on disk are at most MaxBytes
	MaxBytes  int64 // bytes
	// EvictReferenced lets the age and size rules delete referenced
	// blobs too: their stubs then stay stubs (ccm restore names them).
	EvictReferenced bool
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
	Referenced bool         `json:"referenced,omitempty"` // a transcript, backup or archive references it
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
	OverLimit  int64      `json:"over_limit,omitempty"` // bytes still over MaxBytes after the plan
	// What keeps the store over its limit: referenced blobs (which
	// EvictReferenced would let go), blobs stored or used within the
	// grace period, hard-pinned blobs; bytes on disk of each.
	HeldReferenced int64       `json:"held_referenced,omitempty"`
	HeldRecent     int64       `json:"held_recent,omitempty"`
	HeldHard       int64       `json:"held_hard_pinned,omitempty"`
	Index          *IndexStats `json:"references,omitempty"`
	// Repack is what happens to the packs once the deletions are durable:
	// packs left without a live blob go, packs with enough unused bytes
	// are rewritten, each copied blob with its reason.
	Repack *ccm.RepackPlan `json:"repack,omitempty"`
	Root   string          `json:"store"` // paths in the plan are shown relative to it

	st        *ccm.Store
	unlock    func()
	exclusive bool
	index     *RefIndex
}

// item is one blob during planning.
type item struct {
	e      *ccm.Entry
	pin    ccm.PinLevel
	access time.Time // last access (creation when unknown)
	at     int64     // access in Unix nanoseconds, for sorting
	newest time.Time // the later of creation and last access
	size   int64
	ref    bool   // a transcript, backup or archive references it
	recent bool   // stored or used within the grace period
	keep   string // reason it is kept, from the last rule that looked at it
}

// Reasons shared by the rules.
const (
	keepReferenced = "referenced by a transcript, backup or archive (part of its session; --evict-referenced deletes it)"
	keepRecentFmt  = "stored or used within the last %s (a transcript may not reference it yet)"
)

// Decide plans a prune. It is a pure function of its arguments; refs are
// the keys transcripts, backups and archives reference (nil: none). Entries whose metadata cannot be read
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
		_, it.ref = refs[e.Key]
		it.recent = now.Sub(it.newest) < pol.grace()
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
		live = p.gc(live)
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
	return Decision{Key: it.e.Key, Delete: del, Rule: rule, Reason: reason, Referenced: it.ref, Pin: it.pin, DiskBytes: it.size, LastAccess: it.access}
}

func (p *Plan) drop(it *item, rule, reason string) {
	if it.ref {
		reason += "; referenced, evicted (--evict-referenced): its stubs stay stubs"
	}
	p.Deletions = append(p.Deletions, it.decision(true, rule, reason))
}

// gc deletes unpinned blobs that nothing references and that were not
// stored or used within the grace period.
func (p *Plan) gc(live []*item) []*item {
	var out, del []*item
	for _, it := range live {
		switch {
		case it.ref:
			it.keep = "referenced by a transcript, backup or archive"
		case it.pin != ccm.PinNone:
			it.keep = it.pin.String() + "-pinned (gc never deletes pinned blobs)"
		case it.recent:
			it.keep = fmt.Sprintf("unreferenced but stored or used within the last %s", ui.Age(p.Policy.grace()))
		default:
			del = append(del, it)
			continue
		}
		out = append(out, it)
	}
	sort.Slice(del, func(i, j int) bool { return del[i].e.Key < del[j].e.Key })
	for _, it := range del {
		p.drop(it, RuleGC, "no transcript, backup or archive references it")
	}
	return out
}

// held says why the age and size rules may not delete a blob that is
// not pinned: referenced (unless EvictReferenced), or too recent to be
// known unreferenced (a referenced blob is known: the grace period does
// not hold it back from EvictReferenced).
func (p *Plan) held(it *item) string {
	switch {
	case it.ref && !p.Policy.EvictReferenced:
		return keepReferenced
	case it.ref:
		return ""
	case it.recent:
		return fmt.Sprintf(keepRecentFmt, ui.Age(p.Policy.grace()))
	}
	return ""
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
		case !it.access.Before(cutoff):
			it.keep = "accessed within " + limit
		case p.held(it) != "":
			it.keep = p.held(it)
		default:
			del = append(del, it)
			continue
		}
		out = append(out, it)
	}
	sortOldest(del)
	for _, it := range del {
		p.drop(it, RuleAge, "not accessed for more than "+limit)
	}
	return out
}

// size deletes oldest-accessed blobs, unpinned before soft-pinned (and,
// with EvictReferenced, referenced ones after all others), until the bytes
// on disk fit MaxBytes. Hard-pinned blobs are never deleted; if
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
	// Unreferenced blobs go first, unpinned before soft-pinned; referenced
	// ones (only with EvictReferenced) after every unreferenced one.
	var unpinned, soft, refUnpinned, refSoft, held []*item
	for _, it := range live {
		switch {
		case it.pin == ccm.PinHard:
			it.keep = "hard-pinned (never pruned)"
			held = append(held, it)
		case p.held(it) != "":
			it.keep = p.held(it)
			held = append(held, it)
		case it.ref && it.pin == ccm.PinSoft:
			refSoft = append(refSoft, it)
		case it.ref:
			refUnpinned = append(refUnpinned, it)
		case it.pin == ccm.PinSoft:
			soft = append(soft, it)
		default:
			unpinned = append(unpinned, it)
		}
	}
	for _, g := range [][]*item{unpinned, soft, refUnpinned, refSoft} {
		sortOldest(g)
	}
	gone := map[*item]bool{}
	for _, group := range []struct {
		items  []*item
		reason string
	}{
		{unpinned, "over the size limit, oldest access first"},
		{soft, "over the size limit after every unpinned blob, soft pins oldest access first"},
		{refUnpinned, "over the size limit after every unreferenced blob, oldest access first"},
		{refSoft, "over the size limit after every other blob, soft pins oldest access first"},
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
		for _, it := range held {
			switch {
			case it.pin == ccm.PinHard:
				p.HeldHard += it.size
			case it.ref && !p.Policy.EvictReferenced:
				p.HeldReferenced += it.size
			default:
				p.HeldRecent += it.size
			}
		}
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
