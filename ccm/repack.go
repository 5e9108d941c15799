package ccm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"

	"ccm/internal/fsutil"
	"ccm/internal/ui"
)

// RepackThreshold is the share of a pack's bytes that must be unused
// (deleted or superseded frames) before a prune rewrites it. Rewriting
// copies every live frame, so a pack that is mostly live is left as it
// is: restic's prune weighs the same trade (its --max-unused).
const RepackThreshold = 0.20

// Pack actions of a RepackPlan.
const (
	PackKeep    = "keep"
	PackRewrite = "rewrite"
	PackDelete  = "delete"
)

// PackAction is what a repack does with one pack, and why.
type PackAction struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	Size      int64  `json:"bytes"`
	Live      int    `json:"live_blobs"` // after the prune's deletions
	LiveBytes int64  `json:"live_bytes"`
	Action    string `json:"action"`
	Reason    string `json:"reason"`
}

// Move is a live blob a repack copies into the new pack.
type Move struct {
	Key    Key    `json:"key"`
	From   string `json:"from"` // pack id
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// RepackPlan says which packs a prune rewrites or removes and which blobs
// it copies, each with its reason. It is decided before anything changes.
type RepackPlan struct {
	Packs []PackAction `json:"packs"`
	Moves []Move       `json:"moves"`
	Freed int64        `json:"bytes_freed"` // pack bytes that go, minus the copies
}

// Any reports whether the plan changes anything.
func (p *RepackPlan) Any() bool {
	for _, a := range p.Packs {
		if a.Action != PackKeep {
			return true
		}
	}
	return false
}

// PlanRepack decides the repack that follows deleting the keys in
// deleting from a store listed as l: packs with no live blob go, packs
// whose unused share reaches RepackThreshold are rewritten (their live
// frames copied into one new pack). Packs the index names but that are
// missing are left to `ccm cache verify`.
func PlanRepack(l *Listing, deleting map[Key]bool) *RepackPlan {
	keys := make([]Key, 0, len(deleting))
	for k := range deleting {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return PlanRepackSorted(l, keys)
}

// PlanRepackSorted is PlanRepack with the deleted keys given sorted, as
// the listing's entries are: the two are walked together, without a map
// lookup per blob (at 100,000 blobs that mattered).
func PlanRepackSorted(l *Listing, deleting []Key) *RepackPlan {
	type acc struct {
		live  int
		bytes int64
		keys  []int32 // indexes into l.Entries
	}
	// By pack slot (see List), or by path for a listing made otherwise.
	per := make([]acc, l.slots)
	byPath := map[string]*acc{}
	accOf := func(path string, slot int32) *acc {
		if slot > 0 && int(slot) < len(per) {
			return &per[slot]
		}
		a := byPath[path]
		if a == nil {
			a = &acc{}
			byPath[path] = a
		}
		return a
	}
	j := 0
	for i := range l.Entries {
		e := &l.Entries[i]
		for j < len(deleting) && deleting[j] < e.Key {
			j++
		}
		if j < len(deleting) && deleting[j] == e.Key {
			continue
		}
		if len(e.Files) == 0 || !e.Files[0].Packed {
			continue
		}
		a := accOf(e.Files[0].Path, e.Files[0].slot)
		a.live++
		a.bytes += e.Files[0].Size
		a.keys = append(a.keys, int32(i))
	}
	p := &RepackPlan{}
	moves := func(pk PackInfo, a *acc, why string) {
		sort.Slice(a.keys, func(i, j int) bool {
			return l.Entries[a.keys[i]].Files[0].Offset < l.Entries[a.keys[j]].Files[0].Offset
		})
		for _, i := range a.keys {
			e := &l.Entries[i]
			p.Moves = append(p.Moves, Move{Key: e.Key, From: pk.ID, Bytes: e.Files[0].Size, Reason: why})
		}
	}
	var small []int // kept packs under SmallPack, by index in p.Packs
	rewrites := 0
	for _, pk := range l.Packs {
		if pk.Size < 0 {
			continue
		}
		a := accOf(pk.Path, pk.slot)
		act := PackAction{ID: pk.ID, Path: pk.Path, Size: pk.Size, Live: a.live, LiveBytes: a.bytes}
		unused := pk.Size - int64(len(packMagic)) - a.bytes
		share := float64(unused) / float64(max(pk.Size, 1))
		switch {
		case a.live == 0 && pk.Live == 0:
			act.Action, act.Reason = PackDelete, "no index line names it (left by an interrupted purge)"
			p.Freed += pk.Size
		case a.live == 0:
			act.Action, act.Reason = PackDelete, "every blob in it is deleted"
			p.Freed += pk.Size
		case share >= RepackThreshold:
			act.Action = PackRewrite
			act.Reason = fmt.Sprintf("%.0f%% unused (at least %.0f%%): its %d live blobs are copied", 100*share, 100*RepackThreshold, a.live)
			p.Freed += pk.Size - a.bytes
			rewrites++
			moves(pk, a, fmt.Sprintf("pack %s is %.0f%% unused: copied to a new pack", pk.ID, 100*share))
		default:
			act.Action = PackKeep
			act.Reason = fmt.Sprintf("%.0f%% unused, under %.0f%%", 100*share, 100*RepackThreshold)
			if pk.Size < SmallPack {
				small = append(small, len(p.Packs))
			}
		}
		p.Packs = append(p.Packs, act)
	}
	// Small packs (many short purges) are merged into the new pack: when
	// there are several, or when a new pack is written anyway.
	if len(small) >= 2 || len(small) == 1 && rewrites > 0 {
		for _, i := range small {
			act := &p.Packs[i]
			pk := PackInfo{ID: act.ID, Path: act.Path}
			for _, q := range l.Packs {
				if q.ID == act.ID {
					pk = q
				}
			}
			act.Action = PackRewrite
			act.Reason = fmt.Sprintf("small (%s, under %s): merged with the other small packs", ui.Bytes(act.Size), ui.Bytes(SmallPack))
			p.Freed += act.Size - act.LiveBytes
			moves(pk, accOf(pk.Path, pk.slot), fmt.Sprintf("pack %s is small: merged into a new pack", act.ID))
		}
	}
	return p
}

// SmallPack is the size under which kept packs are merged by a repack: a
// store of many short purges would otherwise keep a pack file per purge.
// A variable so that tests can turn it off.
var SmallPack int64 = 4 << 20

// repackStop, when set (tests), is asked after each durable step of a
// repack ("copied", "indexed", "removing": after the first old pack is
// removed); true stops the repack there with no clean-up at all, as a
// kill -9 would. $CCM_TEST_REPACK_KILL names a step at which the process
// kills itself with SIGKILL, for tests of the binary.
var repackStop func(step string) bool

var errRepackStopped = errors.New("repack stopped by test hook")

func stopAt(step string) bool {
	if repackStop != nil && repackStop(step) {
		return true
	}
	if os.Getenv("CCM_TEST_REPACK_KILL") == step {
		// A real kill -9, for tests of the binary: no defer, no clean-up.
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill() // SIGKILL; TerminateProcess on Windows
		}
	}
	return false
}

// Repack executes a plan from PlanRepack. The caller holds the exclusive
// store lock (prune), and has made the plan's deletions durable in the
// index. Crash-safe at every step:
//
//  1. live frames of the packs to rewrite are copied to a new pack, which
//     is fsynced (a crash leaves a pack no index line names);
//  2. the index is rewritten as one put line per live blob, pointing into
//     the new pack (temp file, fsync, rename, fsync of packs/): until the
//     rename every blob is read from its old pack, after it from the new;
//  3. the old packs are removed (a crash leaves packs no line names).
//
// A frame that cannot be read (a truncated pack) keeps its pack as it is.
// It returns the bytes freed on disk.
func (s *Store) Repack(ctx context.Context, plan *RepackPlan) (int64, error) {
	if plan == nil {
		return 0, nil
	}
	moved := map[Key]packLoc{}
	skip := map[string]bool{} // packs that cannot be rewritten
	var pw *packWriter
	var written int64
	for _, mv := range plan.Moves {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if skip[mv.From] {
			continue
		}
		e, ok, err := s.packLookup(mv.Key)
		if err != nil {
			return 0, err
		}
		if !ok || e.loc.pack != mv.From {
			continue // deleted or moved since the plan: nothing to copy
		}
		frame, err := s.readFrame(e.loc)
		if err != nil {
			skip[mv.From] = true
			continue
		}
		if pw == nil {
			if pw, err = s.newPackWriter(); err != nil {
				return 0, err
			}
		}
		loc, err := pw.add(e.loc.codec, frame)
		if err != nil {
			pw.f.Close()
			return 0, err
		}
		loc.crc = e.loc.crc // a damaged frame stays visibly damaged
		moved[mv.Key] = loc
	}
	if pw != nil {
		err := fsutil.Sync(pw.f)
		if cerr := pw.f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = fsutil.SyncDir(s.path(packsDir))
		}
		if err != nil {
			return 0, err
		}
		written = pw.off
	}
	if stopAt("copied") {
		return 0, errRepackStopped
	}
	if err := s.rewriteIndex(ctx, moved); err != nil {
		return 0, err
	}
	if stopAt("indexed") {
		return 0, errRepackStopped
	}
	// Never remove a pack the index still names: a deletion that failed
	// after the plan was made leaves its blob live in its old pack.
	named := map[string]bool{}
	s.idxMu.Lock()
	err := s.loadIndexLocked()
	if err == nil {
		for _, e := range s.idx.entries {
			named[e.loc.pack] = true
		}
	}
	s.idxMu.Unlock()
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, a := range plan.Packs {
		if a.Action == PackKeep || skip[a.ID] || named[a.ID] {
			continue
		}
		if err := os.Remove(a.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, err
		}
		freed += a.Size
		if stopAt("removing") {
			return freed, errRepackStopped
		}
	}
	if err := fsutil.SyncDir(s.path(packsDir)); err != nil {
		return freed, err
	}
	return freed - written, nil
}

// readFrame reads a frame's stored bytes, checking that it is inside its
// pack.
func (s *Store) readFrame(loc packLoc) ([]byte, error) {
	f, err := os.Open(s.packPath(loc.pack))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if loc.off+loc.clen > fi.Size() {
		return nil, fmt.Errorf("frame at %d+%d is past the pack's end", loc.off, loc.clen)
	}
	b := make([]byte, loc.clen)
	_, err = f.ReadAt(b, loc.off)
	return b, err
}

// rewriteIndex replaces the index log by one put line per live blob, with
// the locations in moved, under meta.lock: temp file, fsync, rename, fsync
// of packs/.
func (s *Store) rewriteIndex(ctx context.Context, moved map[Key]packLoc) error {
	unlock, err := s.lockMeta(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s.idxMu.Lock()
	err = s.loadIndexLocked()
	var data []byte
	// The index the new log replays to, built here rather than by parsing
	// the log again, so that its cache is written at once and the next
	// listing does not replay 35 MB of JSON (at 100,000 blobs).
	next := &packIndex{entries: make(map[Key]*packEntry)}
	if err == nil {
		keys := make([]Key, 0, len(s.idx.entries))
		for k := range s.idx.entries {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := s.idx.entries[keys[i]], s.idx.entries[keys[j]]
			if a.meta.CreatedAt.Equal(b.meta.CreatedAt) {
				return keys[i] < keys[j]
			}
			return a.meta.CreatedAt.Before(b.meta.CreatedAt)
		})
		for _, k := range keys {
			e := s.idx.entries[k]
			loc := e.loc
			if l, ok := moved[k]; ok {
				loc = l
			}
			data = append(data, putLine(&e.meta, loc, true)...)
			c := *e
			c.loc = loc
			c.loc.slot = next.intern(loc.pack)
			c.meta.BytesCompressed, c.meta.Compression = loc.clen, string(loc.codec)
			next.entries[k] = &c
		}
		next.lines = len(keys)
	}
	s.idx = nil
	s.idxMu.Unlock()
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileBytes(s.packIndexPath(), fsutil.FileMode, data); err != nil {
		return fmt.Errorf("rewrite pack index: %w", err)
	}
	if f, err := os.Open(s.packIndexPath()); err == nil {
		if st, err := fsutil.Fstat(f); err == nil && st.Size == int64(len(data)) {
			next.ino, next.parsed, next.cachedAt = st.ID.Ino, st.Size, st.Size
			s.writeIndexCache(f, next)
		}
		f.Close()
	}
	return nil
}
