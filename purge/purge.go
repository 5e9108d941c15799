package purge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/fsutil"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// Report says what a purge of one file did (or, in a dry run, would do).
type Report struct {
	Path        string `json:"path"`
	DryRun      bool   `json:"dry_run,omitempty"`
	Changed     bool   `json:"changed"`
	BytesBefore int64  `json:"bytes_before"`
	BytesAfter  int64  `json:"bytes_after"`
	Backup      string `json:"backup,omitempty"`
	// TailBytes were appended by Claude Code while the purge ran and copied
	// over unchanged.
	TailBytes int64 `json:"appended_during_purge,omitempty"`
	// StaleTemps counts the temp files an interrupted purge or restore of
	// this transcript had left beside it, removed before this one began.
	StaleTemps int `json:"stale_temps_removed,omitempty"`
	// Live is set when the purge treated the session as one Claude Code is
	// writing: Options.Live, or (with Options.InferLive) written to within
	// transcript.LiveWindow.
	Live bool `json:"live,omitempty"`
	Stats
	TokensBefore *transcript.Estimate `json:"tokens_before,omitempty"`
	TokensAfter  *transcript.Estimate `json:"tokens_after,omitempty"`
	// EstimateError says why the token estimates are missing from a
	// purge that otherwise succeeded.
	EstimateError string `json:"estimate_error,omitempty"`
	// Holders says what may still write to the replaced file and where
	// that goes; Blind is also set when liveness was judged by the
	// modification time alone.
	rewrite.Holders
	// Swaps counts the renames of the replacement: 1, and one more each
	// time lines that reached the replaced file during a rename were put
	// in their place.
	Swaps int `json:"swaps,omitempty"`
	// Plan lists every decision, in a dry run only: what the purge would
	// do, where and why.
	Plan []Step `json:"plan,omitempty"`
}

// ErrNothingLeft is returned for a file the purge would leave without a
// record: one that holds only progress or per-turn bookkeeping records.
// Such a file is left as it is.
var ErrNothingLeft = errors.New("the purge would leave no record (the file holds only progress or bookkeeping records); nothing was changed")

// ErrLocked is returned when another ccm process is rewriting the same
// transcript (rewrite.ErrLocked).
var ErrLocked = rewrite.ErrLocked

// ErrReadOnly is returned for a protected transcript or directory
// (rewrite.ErrReadOnly).
var ErrReadOnly = rewrite.ErrReadOnly

// afterPlan, when set (by tests), runs once the plan is made, before the
// write pass.
var afterPlan func()

// File purges one transcript.
func File(ctx context.Context, path string, opt Options) (*Report, error) {
	if opt.Now == nil {
		opt.Now = DefaultOptions().Now
	}
	name := path // as given, for the report
	path = rewrite.RealPath(path)
	locked := false
	if opt.LockDir != "" && !opt.DryRun {
		unlock, err := rewrite.Lock(ctx, opt.LockDir, path, opt.LockWait)
		if err != nil {
			return nil, err
		}
		defer unlock()
		locked = true
	}
	src, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("empty file (0 bytes), nothing to purge")
	}
	blind := false
	if opt.InferLive && transcript.RecentlyWritten(fi.ModTime(), opt.Now()) {
		opt.Live = true // its last turn may be in flight: leave it alone
		if opt.LiveNeedsWriter {
			var known bool
			opt.Live, known = transcript.HasWriter(path, fi)
			blind = !known
		}
	}
	if !opt.DryRun {
		if err := rewrite.CheckWritable(path, fi); err != nil {
			return nil, err
		}
	}
	stale := 0
	if locked {
		// Only under the lock: no other ccm process is writing a temp file
		// for this transcript now, so any there is left from a crash. A
		// failure to remove one does not stop the purge; the next one
		// tries again.
		stale, _ = rewrite.RemoveStaleTemps(path)
	}
	limit, unterminated, err := rewrite.RecordsEnd(src, fi.Size())
	if err != nil {
		return nil, err
	}
	s, err := scanFile(io.NewSectionReader(src, 0, limit), opt)
	if err != nil {
		return nil, err
	}
	if s.ix.Len() == 0 {
		return nil, transcript.ErrNoObjects
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs := path // absolute, symlinks resolved: the session path stubs record
	p := makePlan(s, opt, transcript.IsSubagentPath(name) || transcript.IsSubagentPath(path))
	if p.kept() == 0 && p.archive == nil && p.inject == nil {
		return nil, ErrNothingLeft
	}
	rep := &Report{Path: name, DryRun: opt.DryRun, BytesBefore: fi.Size(), StaleTemps: stale, Live: opt.Live}
	rep.Blind = blind
	p.terminate = unterminated
	if err := p.decideStubs(ctx, src); err != nil {
		return nil, err
	}
	if afterPlan != nil {
		afterPlan()
	}
	if opt.DryRun {
		rep.Plan = p.Steps()
	}
	// The estimates of the context before and after the purge tokenize
	// a few hundred KB each. They run once the new file is written,
	// beside the store's final sync, the file's fsync and rename and the
	// wait for late appends: loading the tokenizer any earlier would make
	// every garbage collection of the rewrite mark its tables. The
	// estimate before reads src (pread) and the finished index, and
	// beforeRead closes once it is done, which the rename waits for: the
	// transcript is never read after its rename (an inotify watcher sees
	// a read of the old file under the new file's name). The estimate
	// after reads only the texts the after-counter kept.
	estimate := func() error { return nil }
	beforeRead := make(chan struct{})
	var after *transcript.Counter
	startEstimates := func() {
		if !opt.Tokens {
			close(beforeRead)
			return
		}
		c := s.ix.ActiveChain()
		msgs := s.ix.Messages(c)
		done := make(chan struct{})
		var before, aft transcript.Estimate
		var errBefore, errAfter error
		go func() {
			defer close(done)
			before, errBefore = s.ix.EstimateContext(src, c, msgs)
			close(beforeRead)
			aft, errAfter = after.Estimate()
		}()
		estimate = sync.OnceValue(func() error {
			<-done
			if err := cmp.Or(errBefore, errAfter); err != nil {
				return err
			}
			rep.TokensBefore, rep.TokensAfter = &before, &aft
			return nil
		})
	}
	defer func() { estimate() }() // src stays open until the goroutine is done
	store := opt.Store
	if opt.DryRun || opt.NoStore || opt.RepairOnly {
		store = nil
	}
	if store != nil {
		// Hold the store's shared lock until the transcript that names the
		// new blobs is in place, so a prune cannot collect them meanwhile.
		release, err := store.Hold(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	// A planned last line gets the newline Claude Code always writes:
	// its next append would otherwise be glued to that line, and both
	// records would be lost to a reader.
	w := &rewriter{p: p, terminate: unterminated}
	if p.archive != nil {
		if err := p.storeArchive(ctx, src, store, abs, w); err != nil {
			return nil, err
		}
	}
	if inj := p.inject; inj != nil {
		facts, err := gatherSummary(io.NewSectionReader(src, 0, p.rec(inj.before).Offset))
		if err != nil {
			return nil, err
		}
		inj.text = summaryText(facts, opt.KeepTurns)
	}
	stub := newStubber(ctx, store, opt.Batch, abs)
	w.stub = stub
	if opt.Tokens {
		after = p.afterCounter(w)
	}
	produce := func(out io.Writer) (bool, error) {
		cw := &rewrite.CountingWriter{W: out}
		if err := w.write(io.NewSectionReader(src, 0, limit), cw); err != nil {
			stub.finish()
			return false, err
		}
		startEstimates()
		if err := stub.finish(); err != nil {
			return false, fmt.Errorf("store removed content: %w", err)
		}
		<-beforeRead
		if err := ctx.Err(); err != nil {
			return false, err
		}
		rep.BytesAfter = cw.N + (fi.Size() - limit)
		return w.Changed, nil
	}
	if opt.DryRun {
		out := io.Writer(io.Discard)
		if opt.DryRunOutput != nil {
			out = opt.DryRunOutput
		}
		if _, err := produce(out); err != nil {
			return nil, err
		}
		if err := estimate(); err != nil {
			return nil, err
		}
		rep.Changed = w.Changed
	} else {
		// The file is replaced by then: an estimate that fails (the
		// tokenizer, or a read of the original) is noted in the report,
		// not made the purge's failure.
		noteEstimate := func() {
			if err := estimate(); err != nil {
				rep.EstimateError = err.Error()
			}
		}
		res, err := rewrite.Replace(path, src, limit, opt.Backup, "", opt.Now(), produce, noteEstimate)
		if err != nil {
			return nil, err
		}
		noteEstimate() // done already, unless the file was left unchanged
		rep.Changed = !res.Unchanged
		rep.Backup = rewrite.AsNamed(name, path, res.Backup)
		// The tail copy also carried a partial last line that was there
		// from the start; only what grew after the start was appended.
		rep.TailBytes = res.TailBytes - (fi.Size() - limit)
		rep.BytesAfter += rep.TailBytes
		rep.Holders, rep.Swaps = res.Holders, res.Swaps
		rep.Kept = rewrite.AllAsNamed(name, path, res.Kept)
		rep.Blind = rep.Blind || res.Blind
	}
	if !rep.Changed {
		rep.BytesAfter = rep.BytesBefore
	}
	rep.Stats = p.Stats
	return rep, nil
}

// storeArchive stores the region before the last compact boundary as one
// blob (in a dry run it is only hashed) and prepares its stub.
func (p *Plan) storeArchive(ctx context.Context, src *os.File, store *ccm.Store, abs string, w *rewriter) error {
	a := p.archive
	region := io.NewSectionReader(src, 0, a.offset)
	level := max(p.opt.PinDefault, ccm.PinSoft) // often the only copy of that history: pruned last
	desc := fmt.Sprintf("%d lines before the compact boundary at line %d", a.lines, p.rec(a.boundary).Line)
	var key ccm.Key
	if store != nil {
		k, _, err := store.PutReader(ctx, region, ccm.Source{Type: "archive", SessionPath: abs, Description: desc}, level, "archived by ccm purge --archive-compacted")
		if err != nil {
			return fmt.Errorf("store the archived region: %w", err)
		}
		key = k
	} else {
		h := sha256.New()
		if _, err := io.Copy(h, region); err != nil {
			return err
		}
		k, err := ccm.ParseKey("sha256:" + hex.EncodeToString(h.Sum(nil)))
		if err != nil {
			return err
		}
		key = k
	}
	w.archiveStub = stub.Stub{Key: key, Source: "ccm purge --archive-compacted", Desc: desc, Bytes: a.offset, Lines: a.lines, Pinned: level}
	p.Stats.ArchivedLines = a.lines
	return nil
}

// afterCounter estimates the tokens of the purged file's resume context
// from the lines as they are written: the records on the chain of the
// planned structure.
func (p *Plan) afterCounter(w *rewriter) *transcript.Counter {
	vix, orig, _ := p.virtual()
	c := vix.ActiveChain()
	msgs := vix.Messages(c)
	onChain := map[int]bool{}
	synthOn := false
	for _, m := range msgs {
		for _, r := range m.Recs {
			if orig[r] >= 0 {
				onChain[orig[r]] = true
			} else {
				synthOn = true
			}
		}
	}
	var lineBytes int64
	for i := range onChain {
		lineBytes += int64(p.rec(i).Size)
	}
	ctr := transcript.NewCounter(lineBytes, len(onChain))
	w.onLine = func(line []byte, rec int) {
		if (rec >= 0 && onChain[rec]) || (rec < 0 && synthOn) {
			ctr.Add(transcript.NewRecord(line))
		}
	}
	return ctr
}
