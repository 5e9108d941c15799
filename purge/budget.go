// Budget: this file bounds the bytes in flight between purge's reading and
// its two worker stages (deciding the stubs of large records, storing the
// stubbed content): the copies handed to workers and not yet done.

package purge

import "sync"

// maxInFlight bounds the bytes copied for deciding or storing that are not
// decided or stored yet.
const maxInFlight = 8 << 20

// budget holds the bytes in flight of one stage. take waits while the
// bytes in flight and n would pass maxInFlight (an item larger than that
// still goes, alone); give returns them once the work is done. A stage
// that fails calls stop: every waiter wakes, and take refuses from then
// on.
type budget struct {
	mu       sync.Mutex
	cond     sync.Cond
	inFlight int64
	stopped  bool
}

func newBudget() *budget {
	b := &budget{}
	b.cond.L = &b.mu
	return b
}

// take reserves n bytes, waiting for room; false when the stage stopped.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.stopped && b.inFlight > 0 && b.inFlight+n > maxInFlight {
		b.cond.Wait()
	}
	if b.stopped {
		return false
	}
	b.inFlight += n
	return true
}

// give returns n bytes reserved by take.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.inFlight -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// stop makes every take, waiting or to come, return false.
func (b *budget) stop() {
	b.mu.Lock()
	b.stopped = true
	b.cond.Broadcast()
	b.mu.Unlock()
}
