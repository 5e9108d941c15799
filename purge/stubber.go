package purge

import (
	"context"
	"runtime"
	"sync"

	"ccm/ccm"
)

// stubber moves content into the CCM store, under the keys the plan
// computed, while the write pass splices in the stubs: compressing and
// storing run on background workers, where a purge spends its CPU, and it
// can use every core. Content in
// flight is bounded, so memory stays bounded too.
type stubber struct {
	ctx   context.Context
	store *ccm.Store // nil in a dry run: keys only, nothing stored
	// session is the transcript's absolute path, recorded with what is
	// stored.
	session string
	// batch defers the fsyncs of every blob to one barrier in finish,
	// which runs before the transcript naming them is replaced.
	batch *ccm.Batch
	// shared: batch belongs to the caller (Options.Batch), which
	// commits it; finish only syncs it.
	shared bool

	jobs chan putJob
	wg   sync.WaitGroup

	// queued holds the keys this purge has queued, with their pin: a
	// value met again (Bash's stdout beside its tool_result, a Write's
	// content in its input and its toolUseResult) is stored once, not
	// compressed a second time.
	queued map[ccm.Key]ccm.PinLevel

	budget *budget // the bytes queued and not stored yet

	mu  sync.Mutex
	err error // the first Put that failed
}

type putJob struct {
	key     ccm.Key
	content []byte // from getContent; recycled once stored
	src     ccm.Source
	pin     ccm.PinLevel
	reason  string
}

func newStubber(ctx context.Context, store *ccm.Store, shared *ccm.Batch, session string) *stubber {
	s := &stubber{ctx: ctx, store: store, session: session, queued: make(map[ccm.Key]ccm.PinLevel), budget: newBudget()}
	if store == nil {
		return s
	}
	s.batch = store.NewBatch()
	if shared != nil {
		s.batch, s.shared = shared, true
	}
	workers := runtime.GOMAXPROCS(0)
	s.jobs = make(chan putJob, 2*workers)
	for w := 0; w < workers; w++ {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

func (s *stubber) work() {
	defer s.wg.Done()
	for j := range s.jobs {
		err := s.batch.PutKeyed(s.ctx, j.key, j.content, j.src, j.pin, j.reason)
		n := int64(len(j.content))
		putContent(j.content)
		if err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
			s.budget.stop()
		}
		s.budget.give(n)
	}
}

// put queues the bytes of a planned stub for storing under its key.
// content may be reused by the caller once put returns. In a dry run
// (no store) it does nothing.
func (s *stubber) put(ps *plannedStub, content []byte) error {
	if s.store == nil {
		return nil
	}
	if p, ok := s.queued[ps.key]; ok && p >= ps.pin {
		return nil
	}
	s.queued[ps.key] = ps.pin
	if !s.budget.take(int64(len(content))) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.err
	}
	s.jobs <- putJob{key: ps.key, content: append(getContent(len(content)), content...), src: ps.source(s.session), pin: ps.pin, reason: ps.pinReason}
	return nil
}

// finish waits until everything queued is stored, makes it durable, and
// returns the first error. The transcript must not be replaced unless it
// returns nil.
func (s *stubber) finish() error {
	if s.jobs != nil {
		close(s.jobs)
		s.wg.Wait()
		s.jobs = nil
	}
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	switch {
	case s.batch == nil:
	case s.shared:
		// The blobs of a failed purge stay in the shared pack,
		// unreferenced, until a prune collects them.
		if err == nil {
			err = s.batch.Sync()
		}
	case err != nil:
		s.batch.Close()
	default:
		err = s.batch.Commit()
	}
	return err
}

// contentPools recycle the copies of content in flight by size class
// (64 KiB << i). A purge copies every value it stores (147 MB on the
// benchmark file); fresh copies made the collector run every few
// megabytes under the purge's memory limit.
var contentPools [10]sync.Pool

func contentClass(n int) int {
	c := 0
	for 64<<10<<c < n {
		c++
	}
	return c
}

// getContent returns an empty slice with room for n bytes.
func getContent(n int) []byte {
	c := contentClass(n)
	if c >= len(contentPools) {
		return make([]byte, 0, n)
	}
	if b, ok := contentPools[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 64<<10<<c)
}

// putContent recycles a slice getContent returned.
func putContent(b []byte) {
	if c := contentClass(cap(b)); c < len(contentPools) && cap(b) == 64<<10<<c {
		contentPools[c].Put(&b)
	}
}
