package main

import (
	"context"
	"errors"
	"fmt"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/sessions"
	"ccm/sessions/archive"
	"ccm/sessions/remote"
	"ccm/transcript"
	"ccm/transcript/rewrite"

	"github.com/klauspost/compress/zstd"
)

// packedItem is a packed session waiting for its batch's finish, still
// holding its transcript's lock.
type packedItem struct {
	it   *archivePlanItem
	p    *archive.Packed
	lock *fsutil.Lock
	up   *remote.Uploaded // with --to s3://...
}

// finishBatch finishes packed sessions and releases their locks. After
// an interrupt it discards their archives instead: the originals were
// never touched.
func finishBatch(ctx context.Context, batch []*packedItem, record func(*archivePlanItem, *archive.Result, error), ra *remoteArchive) {
	if len(batch) == 0 {
		return
	}
	ps := make([]*archive.Packed, len(batch))
	for i, pi := range batch {
		ps[i] = pi.p
	}
	var errs []error
	if err := ctx.Err(); err != nil {
		errs = make([]error, len(batch))
		for i, p := range ps {
			p.Discard()
			p.Archive = ""
			errs[i] = err
		}
	} else {
		errs = archive.Finish(ps, nil)
	}
	ra.settle(ctx, batch)
	for i, pi := range batch {
		pi.lock.Unlock()
		record(pi.it, &pi.p.Result, errs[i])
	}
}

// packOne packs one session under its transcript's lock, which it
// returns held: the lock is released after the session's batch finishes.
func packOne(ctx context.Context, o archiveOptions, r *sessions.Row, root, lockDir string, todos sessions.Todos, st *ccm.Store) (*archive.Packed, *fsutil.Lock, error) {
	lk, err := fsutil.LockFile(ctx, rewrite.LockPath(lockDir, r.Path), true, 0)
	if err != nil {
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, nil, fmt.Errorf("%w: a purge is rewriting it", errLocked)
		}
		return nil, nil, err
	}
	related, relDirs, errs := sessions.RelatedIn(o.ClaudeDir, r.ID, todos)
	if len(errs) > 0 {
		lk.Unlock()
		return nil, nil, errs[0]
	}
	src := archive.Source{ConfigDir: o.ClaudeDir, Session: r.Session, Related: related, RelDirs: relDirs,
		Project: r.Project, Title: r.Title, Prompt: r.Prompt, Records: r.Records, Context: r.Context}
	p, err := archive.Pack(ctx, src, archive.Options{Root: root, Level: archiveLevel, Now: o.Now, Store: st})
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	return p, lk, nil
}

// archiveLevel is zstd's fastest level. Archiving is bound by the
// compressor's CPU time (Go's encoder is slower than the C zstd that
// `tar --zstd` runs): on generated transcripts the fastest level packs
// about 30% faster than the default level (zstd -3's equivalent), for
// archives about 10% larger (4.1x instead of 4.5x smaller than the
// transcripts).
var archiveLevel = zstd.SpeedFastest

// wholeSessionsOnly refuses a transcript named on the command line that
// is not a session of the config dir (a subagent transcript, a file
// elsewhere): archive and export (verb) work on whole sessions. Ones a
// walk found are left out quietly.
func wholeSessionsOnly(g globalOptions, verb string, sel *sessions.Selection) error {
	keep := sel.Todo[:0]
	for _, t := range sel.Todo {
		switch {
		case t.Session != nil:
			keep = append(keep, t)
		case t.Named:
			return usagef("%s: not a session of %s (%s works on whole sessions)", t.Path, transcript.ProjectsDir(g.ClaudeDir), verb)
		}
	}
	sel.Todo = keep
	skipped := sel.Skipped[:0]
	for _, k := range sel.Skipped {
		if k.Session != nil {
			skipped = append(skipped, k)
		}
	}
	sel.Skipped = skipped
	return nil
}
