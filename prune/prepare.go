package prune

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccm/ccm"
	"ccm/internal/batch"
	"ccm/internal/ui"
	"ccm/transcript"
)

// Options are what a prune run needs besides the policy.
type Options struct {
	// ClaudeDir is the Claude config directory; its projects/ (and the
	// legacy sessions/) hold transcripts and purge backups that
	// reference blobs.
	ClaudeDir string
	// ArchiveDir holds ccm archive's archives; their manifests
	// (*.manifest.json) list the keys the archived transcripts
	// reference. Archive folders given with --to are recorded in the
	// reference index when they are written and read from there.
	ArchiveDir string
	// DryRun plans under a shared lock and creates nothing; the
	// reference index is checked in memory and not written.
	DryRun bool
	// Progress reports long steps: listing the store (count of blobs),
	// scanning transcripts (bytes) and deleting (count); nil reports
	// nothing.
	Progress ui.Progress
	// Now is the time the plan is made for; zero means time.Now().
	Now time.Time
}

// TranscriptRoots returns where gc looks for references under a Claude
// config directory: projects/ (sessions, subagent files, purge backups),
// each symlink directly under it (a symlinked project folder, which the
// walk of projects/ does not follow and ccm counts as a project like the
// others, sessions.ListProjects; one that leads nowhere now keeps
// what its transcripts referenced until it is back), and sessions/, which
// claude-context-manager also scanned.
func TranscriptRoots(claudeDir string) []string {
	projects := transcript.ProjectsDir(claudeDir)
	roots := []string{projects}
	entries, _ := os.ReadDir(projects) // unreadable: the walk of projects/ fails
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			roots = append(roots, filepath.Join(projects, e.Name()))
		}
	}
	return append(roots, filepath.Join(claudeDir, "sessions"))
}

// Prepare brings the reference index up to date, lists the store and
// decides. The returned plan holds the store's lock (exclusive, or shared
// for a dry run) and the index's until Close; Execute deletes under them.
//
// The index is refreshed twice: first before the store's lock is taken,
// so writers are not held up while changed files are read, then again
// under it, which reads only what changed in between. Under the store's
// exclusive lock no purge is between storing a blob and putting the
// transcript that references it in place (a purge holds the store shared
// from its first store to its rename), so the second refresh sees every
// reference a purge made. A blob stored by a hook whose stub Claude Code
// has not written yet is kept by the grace period.
func Prepare(ctx context.Context, st *ccm.Store, pol Policy, opt Options) (*Plan, error) {
	if !pol.Any() {
		return nil, errors.New("nothing to prune: no rule given")
	}
	if !st.Exists() {
		return nil, fmt.Errorf("%w at %s (nothing has been stored yet, or --cache-dir is wrong)", ccm.ErrNoStore, st.Root())
	}
	if pol.GC && opt.ClaudeDir == "" {
		return nil, errors.New("gc needs the Claude config directory")
	}
	var roots []string
	if opt.ClaudeDir != "" {
		roots = TranscriptRoots(opt.ClaudeDir)
	}
	if opt.ArchiveDir != "" {
		roots = append(roots, opt.ArchiveDir)
	}
	// The first refresh reads the index without its lock, so a purge
	// that notes its files meanwhile is not held up either, and creates
	// nothing until it is known that the run goes ahead.
	x, err := ReadIndex(st.Root())
	if err != nil {
		return nil, err
	}
	_, first, err := x.Refresh(ctx, roots, opt.Progress)
	if err != nil {
		return nil, err
	}
	if pol.GC && first.Files == 0 {
		return nil, fmt.Errorf("%w under %s: refusing to treat every blob as unreferenced (wrong --claude-dir?)",
			ErrNoTranscripts, strings.Join(roots, " or "))
	}
	if !opt.DryRun {
		wait := st.LockWait
		if wait <= 0 {
			wait = ccm.DefaultLockWait
		}
		locked, err := OpenIndex(ctx, st.Root(), wait)
		if err != nil {
			return nil, err
		}
		locked.adopt(x)
		x = locked
	}
	ok := false
	defer func() {
		if !ok {
			x.Close()
		}
	}()
	var unlock func()
	if opt.DryRun {
		unlock, err = st.LockShared(ctx)
	} else {
		unlock, err = st.LockExclusive(ctx)
	}
	if err != nil {
		return nil, err
	}
	refs, stats, err := x.Refresh(ctx, roots, nil)
	if err != nil {
		unlock()
		return nil, err
	}
	stats.Read += first.Read
	stats.Grown += first.Grown
	stats.BytesRead += first.BytesRead
	stats.Unchanged = first.Unchanged
	stats.Duration += first.Duration
	l, err := st.List(ctx, ui.DoneTotal(opt.Progress, "reading the store"))
	if err != nil {
		unlock()
		return nil, err
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	p, err := Decide(l, pol, now, refs)
	if err != nil {
		unlock()
		return nil, err
	}
	deleting := make([]ccm.Key, 0, len(p.Deletions))
	for _, d := range p.Deletions {
		if d.Key != "" {
			deleting = append(deleting, d.Key)
		}
	}
	slices.Sort(deleting)
	p.Repack = ccm.PlanRepackSorted(l, deleting)
	p.Index, p.Root, p.st, p.unlock, p.exclusive, p.index = stats, st.Root(), st, unlock, !opt.DryRun, x
	ok = true
	return p, nil
}

// Close releases the locks Prepare took and writes the reference index
// back. It is safe to call twice.
func (p *Plan) Close() {
	if p.unlock != nil {
		p.unlock()
		p.unlock = nil
	}
	if p.index != nil {
		// The index is a cache: a failure to write it costs the next
		// run a read of what changed, nothing else.
		_ = p.index.Close()
		p.index = nil
	}
}

// Result is what Execute did.
type Result struct {
	Deleted int   `json:"deleted"`
	Freed   int64 `json:"bytes_freed"`
	// RepackFreed is what the repack gave back to the disk: the packs it
	// removed minus the new pack it wrote.
	RepackFreed int64    `json:"pack_bytes_freed"`
	SizeAfter   int64    `json:"bytes_after"`
	Errors      []string `json:"errors,omitempty"`
}

// Execute deletes what the plan says under the exclusive lock Prepare
// took. Only deletions that succeeded are counted. A failure to delete one
// blob does not stop the others; they are all reported in the returned
// error. Cancelling ctx stops the remaining deletions.
//
// Deletions run on a few goroutines: an unlink mostly waits for the disk
// (about 0.3 ms each on this project's VM), and 10,000 of them in a row
// took 8 s; the plan has already decided everything, so order is free.
func (p *Plan) Execute(ctx context.Context, progress ui.Progress) (*Result, error) {
	if p.st == nil || !p.exclusive || p.unlock == nil {
		return nil, errors.New("prune: plan was not prepared for execution (dry run, or already closed)")
	}
	res := &Result{SizeAfter: p.SizeBefore}
	if progress != nil && len(p.Deletions) > 0 {
		progress.Start("deleting", int64(len(p.Deletions)), false)
		defer progress.Finish()
	}
	var (
		mu        sync.Mutex
		errs      []error
		evicted   []Eviction
		evictedAt = p.Now
		handed    atomic.Int64
	)
	batch.Run(ctx, len(p.Deletions), deleteWorkers, func(i int) {
		handed.Add(1)
		d := p.Deletions[i]
		var err error
		var freed int64
		if d.Key == "" {
			err = p.st.RemoveTemp(d.Path)
		} else {
			freed, err = p.st.Remove(d.Key)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			res.Errors = append(res.Errors, err.Error())
		} else {
			res.Deleted++
			if d.Key != "" {
				res.Freed += freed
				res.SizeAfter -= freed
			}
			if d.Referenced {
				evicted = append(evicted, Eviction{Key: d.Key, At: evictedAt, Rule: d.Rule})
			}
		}
		if progress != nil {
			progress.Add(1)
		}
	}, nil)
	canceled := ctx.Err() != nil && int(handed.Load()) < len(p.Deletions)
	sort.Strings(res.Errors)
	if err := logEvictions(p.Root, evicted); err != nil {
		errs = append(errs, fmt.Errorf("record the evicted blobs: %w", err))
	}
	if canceled {
		errs = append(errs, ctx.Err())
	}
	if err := p.st.SyncDirs(); err != nil {
		errs = append(errs, err)
	} else if !canceled && p.Repack.Any() {
		// The deletions are durable in the index: now give their frames'
		// bytes back, by the plan.
		freed, err := p.st.Repack(ctx, p.Repack)
		res.RepackFreed = freed
		if err != nil {
			errs = append(errs, fmt.Errorf("repack: %w", err))
		}
	}
	return res, errors.Join(errs...)
}

// deleteWorkers bounds concurrent unlinks.
const deleteWorkers = 8

func totalSize(roots []string) int64 {
	var n int64
	for _, r := range roots {
		filepath.WalkDir(r, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && IsTranscriptName(d.Name()) {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}
