// Pool: this file is ccm's one worker pool over a list of items: batch
// commands over files and sessions, the store's listing and verification,
// the pack index's parallel parse, prune's reference reads and deletions,
// the usage and session scans, the token estimate. Work that arrives as a
// stream, ordered or bounded by the bytes in flight (the transcript
// index's reader, purge's decide and store stages), is a pipeline with its
// own shape and does not go through it.

package batch

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Run calls fn for the items 0 to n-1 on jobs workers (0 or less: one per
// processor Go may use, runtime.GOMAXPROCS) and done, if set, after each
// one. Items are handed out in order, each to exactly one worker. Run
// stops handing out items once ctx is done and returns when every item
// handed out is finished. Each item's error is fn's business: batch
// commands report it and carry on; a caller that must stop at the first
// error cancels ctx.
func Run(ctx context.Context, n, jobs int, fn func(i int), done func()) {
	RunWith(ctx, n, jobs, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { fn(i) }, done)
}

// RunWith is Run with one state per worker, made by newState as the worker
// starts and passed to each of its items: a read buffer reused from item
// to item instead of one per item.
func RunWith[S any](ctx context.Context, n, jobs int, newState func() S, fn func(s S, i int), done func()) {
	if n <= 0 {
		return
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	stop := ctx.Done()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newState()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(s, i)
				if done != nil {
					done()
				}
			}
		}()
	}
	wg.Wait()
}
