package rewrite

// The swap: how a rename replaces a file that is being appended to
// without losing a line or changing the order of lines.
//
// Claude Code appends to a transcript by path and without a lock: open
// with O_APPEND, write one line, close. Its line is fixed before the open.
// A rename that replaces the file splits the writers in two: an append
// whose open came before the rename writes to the old file, one whose
// open came after writes to the new file. Call the lines of the first kind
// early and those of the second late-opened.
//
// Order. Every early line belongs before every late-opened line. A writer
// that appends one line after the other (each call returns before the
// next opens) writes its early lines before its late-opened ones, since
// the opens of the first came before the rename and those of the second
// after it. Appends of several writers whose open-to-write intervals
// overlap have no order of their own: on a file nobody replaced they could
// land either way, and the transcript has one of those ways, the order of
// their opens across the rename. Within one file, O_APPEND keeps the order
// of the writes.
//
// The copy before the rename moves the old file's bytes up to some offset
// c into the temp file, and the rename puts that file, of size s, in
// place. The old file's bytes past c are early lines that landed after
// the last copy (late lines, below); the new file's bytes past s are
// late-opened. The transcript in order is therefore
//
//	new[:s] + old[c:] + new[s:]
//
// Once no process has the old file open for writing, nothing can reach it
// any more (nobody can open it by the transcript's name), so old[c:] is
// final. If it is empty, the new file is already that order, whatever was
// appended to it since. If not, another swap builds exactly that file in
// a new temp file (copying new[s:] until it stops growing) and renames it
// over the new file. That swap is the same step one file later: its own
// late lines, if any, are put in place by the next one, with the same
// argument. Each further swap needs another append that opened in the
// microseconds between a copy and a rename, so the swaps end when the
// writers pause; there is no fsync in that window to widen it. The lines
// copied before a rename are fsynced before it, except those of the last
// copy, fsynced right after it.
//
// Knowing when the old file is final. Linux tells which processes have a
// file open (fsutil.Writers). Where the system cannot tell (or under
// CCM_LIVE_DETECT=portable) the rewrite waits lateWait after the rename
// and until the old file has kept its size for settle: an append
// descheduled between its open and its write for longer than that reaches
// the old file after the rewrite is done. The old file therefore keeps a
// name while the transcript was written to lately (transcript.LiveWindow) or during
// the rewrite, and the report says where.
//
// A writer that holds the file open (not Claude Code) writes through its
// descriptor to whichever file it opened. Seen before the rename, it is
// waited for up to HeldWait, and the file is left as it was if it still
// holds it then. One that opened the file in the instant between that
// check and the rename is waited for after it, its lines are carried over
// like the others, and if it still holds the old file at HeldWait, the old
// file keeps its name and the report names it: what it writes next is
// there. The old file has had that name since before the rename (the
// backup when it is a link, else FILE.backup.<stamp>-held), so no line is
// ever written to a file without a name (on a filesystem with hard links;
// without them, the report says the lines are lost).

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccm/internal/fsutil"
)

// Waits of a swap. lateWait is how long after the rename a rewrite waits
// for the old file where the system cannot tell whether a process still
// has it open: long enough for an append whose open came before the
// rename to land. HeldWait bounds the wait for a process that holds the
// file open for writing: Claude Code's open-write-close takes
// microseconds, so one still holding it after that writes through a
// descriptor it keeps. settle is how long the old file must stay free, or
// keep its size. Whether the file counts as live where the system cannot
// tell is the one live rule, transcript.RecentlyWritten.
const (
	lateWait = 100 * time.Millisecond
	HeldWait = 2 * time.Second
	settle   = 10 * time.Millisecond
)

// HeldOpenError is returned, with nothing changed, when other processes
// still have the file open for writing HeldWait after the rewrite first
// saw them, right before the rename: what they write goes to the file
// they opened, so replacing it would take their next lines out of the
// transcript.
type HeldOpenError struct{ Pids []int }

func (e *HeldOpenError) Error() string {
	ids := make([]string, len(e.Pids))
	for i, p := range e.Pids {
		ids[i] = strconv.Itoa(p)
	}
	if len(ids) == 1 {
		return fmt.Sprintf("process %s keeps the file open for writing: it was left as it was, so that what it writes stays in it (try again once it has closed it)", ids[0])
	}
	return fmt.Sprintf("processes %s keep the file open for writing: it was left as it was, so that what they write stays in it (try again once they have closed it)", strings.Join(ids, ", "))
}

// replaced is a file that a rename took the transcript's name from, and
// that a writer which opened it before may still append to.
type replaced struct {
	f       *os.File    // open for reading
	fi      os.FileInfo // as it was when it had the name
	copied  int64       // its bytes already in the transcript
	hold    string      // a name that keeps it reachable ("" none yet)
	ownHold bool        // hold was made for this and goes once nothing can reach the file
	live    bool        // written to lately, or during the rewrite
}

// swapper carries one Replace from its first rename to its last.
type swapper struct {
	path string
	now  time.Time
	res  *Result
	h    Hooks
	size int64 // the size of the file the last rename put in place
	err  error // the first fsync that failed after a rename
}

// hold gives old a name that outlives the rename: the backup when it is a
// hard link (isLink), else a link made for it. On a filesystem without
// hard links it has none, and the result says so if it needed one.
func (s *swapper) hold(old *replaced, isLink bool) {
	if isLink {
		old.hold = s.res.Backup
		return
	}
	if name, err := linkHeld(s.path, s.now); err == nil {
		old.hold, old.ownHold = name, true
	}
}

// abort undoes what Replace made before a rename that does not happen:
// the hold link and the backup.
func (s *swapper) abort(old *replaced) {
	if old.ownHold {
		os.Remove(old.hold)
	}
	if s.res.Backup != "" {
		os.Remove(s.res.Backup)
		s.res.Backup = ""
	}
}

// awaitFree waits, before a rename, until no other process has old open
// for writing, and returns those that still do at deadline. Where the
// system cannot tell, it waits instead, when old is live, until old has
// kept its size for settle, for lateWait at most: an append is then less
// likely to race the rename, and the hold keeps old reachable anyway.
func (s *swapper) awaitFree(old *replaced, deadline time.Time) []int {
	last := int64(-1)
	quiet := time.Now().Add(lateWait)
	for {
		pids, ok := fsutil.LiveWriters(s.path, old.fi)
		if ok && len(pids) == 0 {
			return nil
		}
		if !ok {
			s.res.Blind = true
			fi, err := old.f.Stat()
			if !old.live || err != nil || fi.Size() == last || !time.Now().Before(quiet) {
				return nil
			}
			last = fi.Size()
		}
		if !time.Now().Before(deadline) {
			return pids
		}
		time.Sleep(min(settle, time.Until(deadline)))
	}
}

// install copies what old received since the last copy to tmp, gives tmp
// old's modification time (a rewrite does not change the conversation,
// and Claude Code picks the current session by it) and renames it over
// path at once; the directory is fsynced, and so is the file when that
// last copy found bytes (what came before was fsynced already). It closes
// tmp and returns it as it was at the rename (nil when the rename did not
// happen); s.size is its size.
func (s *swapper) install(tmp *os.File, old *replaced) (os.FileInfo, error) {
	from := old.copied
	if err := copyTail(tmp, old.f, &old.copied); err != nil {
		return nil, err
	}
	if fi, err := old.f.Stat(); err == nil {
		_ = os.Chtimes(tmp.Name(), time.Time{}, fi.ModTime())
	}
	fi, err := tmp.Stat()
	if err != nil {
		return nil, err
	}
	if s.h.BeforeRename != nil {
		s.h.BeforeRename(s.res.Swaps)
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := fsutil.Rename(tmp.Name(), s.path); err != nil {
		return nil, err
	}
	s.res.Swaps++
	s.size = fi.Size()
	// The file is in place: a failed fsync is reported at the end, and
	// the late lines are still put in place.
	err = fsutil.SyncDir(dirOf(s.path))
	if err == nil && old.copied > from {
		err = syncFile(s.path, fi)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
	if s.h.AfterRename != nil {
		s.h.AfterRename(s.res.Swaps - 1)
	}
	return fi, nil
}

// syncFile fsyncs the file at path if it is still fi.
func syncFile(path string, fi os.FileInfo) error {
	f, err := fsutil.OpenToSync(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(now, fi) {
		return err
	}
	return fsutil.Sync(f)
}

// finish runs after the first rename, cur being the file it put in place:
// it waits until nothing more can reach the old file, puts the lines that
// reached it after the last copy in their place by another swap, and does
// the same for that swap, until a swap has no late lines. during, if not
// nil, runs beside the first wait.
func (s *swapper) finish(old *replaced, cur os.FileInfo, during func()) error {
	if during != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			during()
		}()
		defer func() { <-done }()
	}
	src := old.f
	defer func() {
		if old.f != src {
			old.f.Close()
		}
	}()
	for renamedAt := time.Now(); ; renamedAt = time.Now() {
		pids, held := s.awaitFinal(old, renamedAt)
		fi, err := old.f.Stat()
		if err == nil && fi.Size() < old.copied {
			err = errShrank
		}
		if err == nil && fi.Size() == old.copied {
			s.release(old, pids, held)
			return nil
		}
		old.live = true // written to after the rename
		var next *replaced
		if err == nil {
			next, cur, err = s.rebuild(old, cur)
		}
		if err != nil {
			// The late lines stay in the old file, which keeps its name.
			s.keep(old, pids, held)
			where := old.hold
			if where == "" {
				where = "the replaced file, which has no name (no hard links here)"
			}
			return fmt.Errorf("the file was replaced, but lines appended during the rename could not be put in place: they are in %s: %w", where, err)
		}
		s.release(old, pids, held)
		if old.f != src {
			old.f.Close()
		}
		old = next
	}
}

// awaitFinal waits, after a rename, until nothing more can reach old: no
// other process has it open for writing (seen free twice, settle apart),
// or, where the system cannot tell, lateWait has passed and old has kept
// its size for settle. It gives up HeldWait after the rename, held, with
// the processes that still have old open (none known where the system
// cannot tell and old was still growing).
func (s *swapper) awaitFinal(old *replaced, renamedAt time.Time) (pids []int, held bool) {
	deadline := renamedAt.Add(HeldWait)
	free, last := 0, int64(-1)
	for {
		var ok bool
		pids, ok = fsutil.LiveWriters(s.path, old.fi)
		switch {
		case ok && len(pids) == 0:
			if free++; free == 2 {
				return nil, false
			}
		case ok:
			free = 0
		default:
			s.res.Blind = true
			fi, err := old.f.Stat()
			if err != nil {
				return nil, false
			}
			if fi.Size() == last && time.Since(renamedAt) >= lateWait {
				return nil, false
			}
			last = fi.Size()
		}
		if !time.Now().Before(deadline) {
			return pids, true
		}
		time.Sleep(min(settle, time.Until(deadline)))
	}
}

// rebuild puts the late lines of old in their place: a new temp file gets
// the transcript as the last rename put it in place (cur, its first
// s.size bytes), then old's bytes past what was copied, then what was
// appended to cur since, and replaces cur the way the first rename
// replaced the original. It returns cur as the file now replaced, and the
// new file.
func (s *swapper) rebuild(old *replaced, cur os.FileInfo) (*replaced, os.FileInfo, error) {
	f, err := fsutil.OpenRegular(s.path)
	if err != nil {
		return nil, nil, err
	}
	next := &replaced{f: f, fi: cur, copied: s.size, live: true}
	tmp, err := fsutil.CreateTemp(s.path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
			if next.ownHold {
				os.Remove(next.hold)
			}
			f.Close()
		}
	}()
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, cur) {
		return nil, nil, cmp.Or(err, errReplaced)
	}
	if _, err := io.Copy(tmp, io.NewSectionReader(f, 0, s.size)); err != nil {
		return nil, nil, err
	}
	if err := copyTail(tmp, old.f, &old.copied); err != nil {
		return nil, nil, err
	}
	if err := copyTail(tmp, f, &next.copied); err != nil {
		return nil, nil, err
	}
	if err := prepare(tmp, cur); err != nil {
		return nil, nil, err
	}
	s.hold(next, false)
	// A process that holds cur is waited for, but the swap goes on: the
	// late lines must reach the transcript, and cur keeps its name.
	s.awaitFree(next, time.Now().Add(HeldWait))
	nfi, err := s.install(tmp, next)
	if err != nil {
		return nil, nil, err
	}
	ok = true
	return next, nfi, nil
}

// release drops old's hold link once nothing can reach old, and keeps it,
// reporting it, while something may: a process that still holds old, or,
// where the system cannot tell, any writer of a live file.
func (s *swapper) release(old *replaced, pids []int, held bool) {
	if held || (s.res.Blind && old.live) {
		s.keep(old, pids, held)
		return
	}
	if old.ownHold {
		os.Remove(old.hold)
	}
}

// keep reports old's hold as a file something may still write to: pids,
// or, held where the system cannot tell who, a writer it saw at work.
// Without a hold (no hard links), what they write goes nowhere, and the
// result says that too.
func (s *swapper) keep(old *replaced, pids []int, held bool) {
	if old.hold != "" {
		s.res.Kept = append(s.res.Kept, old.hold)
	} else if held {
		s.res.Unnamed = true
	}
	s.res.HeldOpen = append(s.res.HeldOpen, pids...)
	if held && len(pids) == 0 {
		s.res.StillWritten = true
	}
}

// Hooks are injection points for tests in the rewrites of one file, each
// called with the number of the swap (0 for the first rename, 1 for the
// swap that puts its late lines in place, and so on). BeforeRename runs
// after the swap's last copy, right before its rename; AfterRename right
// after the rename and the directory's fsync.
type Hooks struct {
	BeforeRename func(swap int)
	AfterRename  func(swap int)
}

var hooks sync.Map // RealPath -> Hooks

// SetHooks installs h for the rewrites of path until remove is called.
// Only tests use it: they make a writer's timing against the rename
// exact, without sleeps.
func SetHooks(path string, h Hooks) (remove func()) {
	key := RealPath(path)
	hooks.Store(key, h)
	return func() { hooks.Delete(key) }
}

func hook(path string) Hooks {
	if h, ok := hooks.Load(path); ok {
		return h.(Hooks)
	}
	return Hooks{}
}
