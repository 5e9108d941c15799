package fsutil

import (
	"sync"
	"sync/atomic"
)

var (
	notify   atomic.Pointer[func(string)]
	noted    sync.Map   // kind -> struct{}
	notifyMu sync.Mutex // one note at a time: SyncFiles syncs from goroutines
)

// SetNotify makes fsutil report through fn, once per kind in a process,
// each weaker guarantee it falls back to: a filesystem that cannot flush
// the drive's cache (F_FULLFSYNC) or the whole filesystem (syncfs). A
// command's -v sets it; nil (the default) stays silent.
func SetNotify(fn func(msg string)) {
	if fn == nil {
		notify.Store(nil)
		return
	}
	notify.Store(&fn)
}

// noteOnce reports msg through SetNotify's function the first time kind
// occurs.
func noteOnce(kind, msg string) {
	if _, dup := noted.LoadOrStore(kind, struct{}{}); dup {
		return
	}
	if fn := notify.Load(); fn != nil {
		notifyMu.Lock()
		defer notifyMu.Unlock()
		(*fn)(msg)
	}
}
