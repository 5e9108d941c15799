package purge

import (
	"context"
	"runtime"
	"sync"

	"ccm/ccm"
)

// stubber moves content into the CCM store. The key is computed at once
// (SHA-256 runs at about 1.5 GB/s) so the stub can be written straight
// away, while compressing and storing run on background workers: that is
// where a purge spends its CPU, and it can use every core. Content in
// flight is bounded, so memory stays bounded too.
type stubber struct {
	ctx   context.Context
	store *ccm.Store // nil in a dry run: keys only, nothing stored
	// batch defers the fsyncs of every blob to one barrier in finish,
	// which runs before the transcript naming them is replaced.
	batch *ccm.Batch

	jobs chan putJob
	wg   sync.WaitGroup

	mu       sync.Mutex
	cond     *sync.Cond
	inFlight int64
	err      error
}

type putJob struct {
	content []byte
	src     ccm.Source
	pin     ccm.PinLevel
	reason  string
}

// maxInFlight bounds the bytes copied for storing that are not stored yet.
const maxInFlight = 16 << 20

func newStubber(ctx context.Context, store *ccm.Store) *stubber {
	s := &stubber{ctx: ctx, store: store}
	s.cond = sync.NewCond(&s.mu)
	if store == nil {
		return s
	}
	s.batch = store.NewBatch()
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
		_, err := s.batch.Put(s.ctx, j.content, j.src, j.pin, j.reason)
		s.mu.Lock()
		s.inFlight -= int64(len(j.content))
		if err != nil && s.err == nil {
			s.err = err
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// stash returns the key of content and queues it for storing. content
// may be reused by the caller once stash returns.
func (s *stubber) stash(content []byte, src ccm.Source, pin ccm.PinLevel, reason string) (ccm.Key, error) {
	key := ccm.KeyOf(content)
	if s.store == nil {
		return key, nil
	}
	n := int64(len(content))
	s.mu.Lock()
	for s.err == nil && s.inFlight > 0 && s.inFlight+n > maxInFlight {
		s.cond.Wait()
	}
	err := s.err
	if err == nil {
		s.inFlight += n
	}
	s.mu.Unlock()
	if err != nil {
		return key, err
	}
	s.jobs <- putJob{content: append([]byte(nil), content...), src: src, pin: pin, reason: reason}
	return key, nil
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
	if s.batch != nil {
		if err != nil {
			s.batch.Close()
		} else {
			err = s.batch.Commit()
		}
	}
	return err
}
