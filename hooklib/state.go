package hooklib

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"ccm/hooklib/monitor"
	"ccm/internal/fsutil"
)

// State is what ccm remembers about one session between hook runs.
type State struct {
	SessionID string `json:"session_id"`
	// Prompts counts UserPromptSubmit events.
	Prompts int `json:"prompts"`
	// LastRules and LastClaudeMD are the prompt numbers of the last
	// refreshes (0: never).
	LastRules    int `json:"last_rules_refresh"`
	LastClaudeMD int `json:"last_claude_md_refresh"`
	// ForceRefresh is set by `ccm refresh`: the next prompt gets rules and
	// CLAUDE.md whatever the counter says. It expires after a day.
	ForceRefresh time.Time `json:"force_refresh,omitzero"`
	// LastCapture is the key of the session's latest captured output
	// (`ccm:pin last` pins it); PinNext and PinRange are the levels of a
	// pending `ccm:pin next` and of an open `ccm:pin start`.
	LastCapture string `json:"last_capture,omitempty"`
	PinNext     string `json:"pin_next,omitempty"`
	PinRange    string `json:"pin_range,omitempty"`
	// Lessons are the tool-memory lessons already shown in this session
	// (their hashes): each is shown at most once.
	Lessons []string `json:"lessons,omitempty"`
	// ScanOffset is where the Stop scan of the transcript stopped.
	ScanOffset int64     `json:"scan_offset,omitempty"`
	Updated    time.Time `json:"updated"`
	// Context is the context monitor's and audit's memory.
	Context monitor.State `json:"context,omitzero"`
	// Cold is the cold-task check's turn counter.
	Cold ColdState `json:"cold,omitzero"`
}

// Store keeps State files in a directory, one per session, next to one
// lock file. Every update takes an exclusive flock on the lock file, reads,
// modifies and atomically replaces the session's file: parallel hooks of
// one session never lose an update (agentihooks' unlocked
// read-modify-write lost most of them). The critical
// section is a few hundred microseconds, so one lock for all sessions
// costs nothing measurable and leaves no per-session lock files to clean up.
type Store struct {
	Dir string
	// Wait bounds how long a hook waits for the lock before giving up
	// (and logging). Claude Code's own hook timeout is far longer.
	Wait time.Duration
	// Log, when set, gets one line when a corrupt file is set aside.
	Log func(format string, args ...any)
}

// NewStore returns the Store under <ccm home>/state.
func NewStore(home string) *Store {
	return &Store{Dir: filepath.Join(home, "state"), Wait: 3 * time.Second}
}

// fileName maps a session id to a file name. Ids are UUIDs in practice;
// anything else is sanitised and, if that changed it, suffixed with a hash
// so two ids never share a file.
func fileName(session string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, session)
	if len(clean) > 100 {
		clean = clean[:100]
	}
	if clean != session {
		sum := sha256.Sum256([]byte(session))
		clean += "-" + hex.EncodeToString(sum[:6])
	}
	return clean + ".json"
}

func (s *Store) path(session string) string { return filepath.Join(s.Dir, fileName(session)) }

func (s *Store) lock(ctx context.Context) (*fsutil.Lock, error) {
	return fsutil.LockFile(ctx, filepath.Join(s.Dir, ".lock"), true, s.Wait)
}

// Load reads a session's state without locking (the file is replaced
// atomically, so a read sees one version or the other). A missing file is
// a fresh state; an unreadable one is an error.
func (s *Store) Load(session string) (State, error) {
	st := State{SessionID: session}
	data, err := fsutil.ReadRegular(s.path(session), maxReadFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return State{SessionID: session}, fmt.Errorf("state %s: %w", s.path(session), err)
	}
	return st, nil
}

// Update runs fn on the session's state under the lock and saves the
// result unless fn returns an error. A corrupt state file (a crash can
// leave one, as writes are not fsynced) starts over from zero.
func (s *Store) Update(ctx context.Context, session string, now time.Time, fn func(*State) error) (State, error) {
	if session == "" {
		return State{}, errors.New("no session id")
	}
	l, err := s.lock(ctx)
	if err != nil {
		return State{}, err
	}
	defer l.Unlock()
	st, err := s.Load(session)
	if err != nil && !errors.As(err, new(*json.SyntaxError)) && !errors.As(err, new(*json.UnmarshalTypeError)) {
		return State{}, err
	}
	if err != nil {
		// Set the corrupt file aside, never trust it: keep it for a look.
		aside := s.path(session) + ".corrupt"
		if rerr := os.Rename(s.path(session), aside); rerr == nil && s.Log != nil {
			s.Log("state: corrupt file set aside as %s (%v); starting over", aside, err)
		}
	}
	if err := fn(&st); err != nil {
		return st, err
	}
	st.SessionID, st.Updated = session, now.UTC()
	data, err := json.Marshal(st)
	if err != nil {
		return st, err
	}
	if err := fsutil.WriteFileVolatile(s.path(session), fsutil.FileMode, append(data, '\n')); err != nil {
		return st, err
	}
	stateWrites.Add(1)
	return st, nil
}

// stateWrites counts the state files written (Update), for the tests of
// how many writes a hook makes.
var stateWrites atomic.Int64

// Remove deletes a session's state (SessionEnd).
func (s *Store) Remove(ctx context.Context, session string) error {
	if session == "" {
		return nil
	}
	l, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if err := os.Remove(s.path(session)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Forget ends a session (SessionEnd). A session that was warned about its
// context fill keeps the context monitor's part: resumed later it is the
// same session, and a threshold it crossed must not warn a second time.
// Every other session's file goes.
func (s *Store) Forget(ctx context.Context, session string, now time.Time) error {
	st, err := s.Load(session)
	if err != nil || st.Context.Level == 0 && st.Context.Pending == "" {
		return s.Remove(ctx, session)
	}
	_, err = s.Update(ctx, session, now, func(st *State) error {
		*st = State{Context: st.Context}
		return nil
	})
	return err
}

// Sessions returns the ids of the sessions with state updated within
// maxIdle: the live ones.
func (s *Store) Sessions(maxIdle time.Duration, now time.Time) ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		st, err := s.Load(strings.TrimSuffix(name, ".json"))
		if err != nil || st.SessionID == "" || now.Sub(st.Updated) > maxIdle {
			continue
		}
		ids = append(ids, st.SessionID)
	}
	return ids, nil
}

// IdleLimit is how long a session's state may go untouched before it is
// removed: a session resumed after that starts its counters over.
const IdleLimit = 7 * 24 * time.Hour

// gcEvery spaces out the idle-state sweeps: listing the directory on every
// hook run would be waste.
const gcEvery = 24 * time.Hour

// MaybeGC removes state files (and leftover temp files) idle for more than
// IdleLimit, at most once every gcEvery, as recorded by the mtime of
// state/.gc. It returns how many files it removed.
func (s *Store) MaybeGC(ctx context.Context, now time.Time) (int, error) {
	stamp := filepath.Join(s.Dir, ".gc")
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < gcEvery {
		return 0, nil
	}
	l, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer l.Unlock()
	f, err := fsutil.OpenPrivate(stamp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return 0, err
	}
	fsutil.SetModTime(f, now)
	f.Close()
	return removeIdle(s.Dir, now, IdleLimit, func(name string) bool {
		return strings.HasSuffix(name, ".json") || strings.Contains(name, ".ccm-tmp-")
	})
}

// removeIdle deletes the files in dir that match keep and were last
// modified more than idle before now.
func removeIdle(dir string, now time.Time, idle time.Duration, match func(string) bool) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !match(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) <= idle {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}

// deferState queues an edit of the session's state for the hook's next
// updateState, or for the update Run makes once the features are done: a
// Stop's features then replace the state file once, not once each. Each
// replacement is a rename over the old file, which ext4 (auto_da_alloc)
// answers by starting to write the new one out: 0.2 to 2 ms under strace.
func (h *Hook) deferState(edit func(*State)) { h.stateEdits = append(h.stateEdits, edit) }

// updateState is State.Update with the queued edits applied before fn. If
// the update fails, or fn returns an error, the edits stay queued.
func (h *Hook) updateState(ctx context.Context, session string, fn func(*State) error) (State, error) {
	edits := h.stateEdits
	h.stateEdits = nil
	st, err := h.State.Update(ctx, session, h.Now, func(s *State) error {
		for _, e := range edits {
			e(s)
		}
		return fn(s)
	})
	if err != nil {
		h.stateEdits = append(edits, h.stateEdits...)
	}
	return st, err
}

// flushState saves the edits still queued when the hook's features are
// done.
func (h *Hook) flushState(ctx context.Context) {
	if len(h.stateEdits) == 0 {
		return
	}
	if _, err := h.updateState(ctx, h.In.SessionID(), func(*State) error { return nil }); err != nil {
		h.Log.Printf("session state: %v", err)
		h.stateEdits = nil
	}
}
