package hooklib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"ccm/hooklib/compress"
	"ccm/transcript"
)

// Options are the inputs of one hook run.
type Options struct {
	// Event is the event named on the command line ("ccm hook
	// UserPromptSubmit"); hook_event_name on stdin wins when both exist.
	Event     string
	ClaudeDir string
	Stdin     io.Reader
	Stdout    io.Writer
	// Lookup reads the environment (os.LookupEnv when nil).
	Lookup func(string) (string, bool)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// InputWait bounds the wait for stdin (InputWait when 0).
	InputWait time.Duration
	// Budget bounds the whole run (Budget(event) when 0).
	Budget time.Duration
}

// Hook is one hook run as features see it.
type Hook struct {
	Event  string
	In     *Input
	Config *Config
	State  *Store
	Log    *Logger
	Now    time.Time
	Lookup func(string) (string, bool)

	comp *compress.Compressor // built on first use
	// stateEdits are edits of the session's state not saved yet
	// (deferState).
	stateEdits []func(*State)
}

// handler is a feature set for one event.
type handler func(ctx context.Context, h *Hook) (Response, error)

// handlers maps events to what ccm does on them. Events not listed are
// accepted and ignored.
var handlers = map[string]handler{
	SessionStart:         onSessionStart,
	UserPromptSubmit:     onUserPromptSubmit,
	PreToolUse:           onPreToolUse,
	PostToolUse:          onPostToolUse,
	"PostToolUseFailure": onPostToolUseFailure,
	Stop:                 onStop,
	SessionEnd:           onSessionEnd,
}

// Run runs one hook and returns the process exit status, which is always
// 0: ccm has no feature yet that deliberately blocks, and everything that
// goes wrong (bad input, an unknown event, an internal error, a panic) is
// logged and answered with silence so the user's session carries on.
func Run(ctx context.Context, o Options) (code int) {
	start := time.Now()
	lookup := o.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if DisabledByEnv(lookup) {
		return 0 // before reading anything: the cheapest possible no-op
	}
	if transcript.CheckConfigDir(o.ClaudeDir) != nil {
		// No config dir: nothing to log into and nothing to create. A
		// hook stays silent and never blocks Claude Code.
		return 0
	}
	if _, ok := lookup("GOGC"); !ok && o.Lookup == nil {
		// A hook lives a few milliseconds and allocates a few times its
		// input (at most MaxInput): collecting garbage would only cost
		// time. The memory limit still makes the collector run if a run
		// ever grows past it.
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(512 << 20)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var log *Logger
	defer func() {
		if r := recover(); r != nil {
			if log != nil {
				log.Printf("internal error: %v; %s", r, compactStack())
			}
			code = 0
		}
	}()
	cfg := LoadConfig(o.ClaudeDir, lookup)
	log = NewLogger(cfg, now)
	log.SetContext(o.Event, "")
	if cfg.Disabled() {
		return 0
	}
	wait := o.InputWait
	if wait <= 0 {
		wait = InputWait
	}
	budget := func(event string) time.Duration {
		if o.Budget > 0 {
			return o.Budget
		}
		return Budget(event)
	}
	in, err := ReadInputWithin(o.Stdin, MaxInput, min(wait, budget(o.Event)))
	if err != nil {
		log.Printf("bad input: %v", err)
		return 0
	}
	event := in.Event()
	if event == "" {
		event = o.Event
	} else if o.Event != "" && o.Event != event {
		log.Printf("registered for %s but got %s; answering as %s", o.Event, event, event)
	}
	log.SetContext(event, in.SessionID())
	if !knownEvents[event] {
		log.Printf("unknown event %q ignored", event)
		return 0
	}
	h := &Hook{Event: event, In: in, Config: cfg, State: NewStore(cfg.Home), Log: log, Now: now(), Lookup: lookup}
	h.State.Log = log.Printf
	fn := handlers[event]
	if fn == nil {
		return 0
	}
	resp, err := runWithin(ctx, start.Add(budget(event)), h, fn)
	if errors.Is(err, errGaveUp) {
		log.Printf("gave up after %s, the budget of a %s hook: answering nothing", budget(event), event)
		return 0
	}
	for _, w := range cfg.Warnings {
		log.Printf("config: %s", w)
	}
	if err != nil {
		log.Printf("%v", err)
		return 0
	}
	out, dropped := Render(event, resp)
	if dropped {
		log.Printf("dropped output that %s does not accept", event)
	}
	if out != nil {
		if _, err := o.Stdout.Write(out); err != nil {
			log.Printf("write stdout: %v", err)
		}
	}
	return 0
}

// errGaveUp is runWithin's error when the deadline came first.
var errGaveUp = errors.New("gave up waiting")

// runWithin runs the event's handler and saves the session's state, and
// waits for them until deadline at most; past it, it cancels ctx and
// returns errGaveUp. The handler is left running then: the hook process
// exits right after, and whatever it was writing is written beside its
// file and renamed into place, so nothing is left half-written. Waiting
// for an answer that comes too late would only make Claude Code kill the
// hook and lose the answer anyway, after keeping the user waiting.
//
// The deadline is a plain timer and a cancel, not context.WithDeadline:
// measured with farm-bench on the idle PreToolUse hook, the deadline
// context cost about 5 % of the whole hook's run.
func runWithin(ctx context.Context, deadline time.Time, h *Hook, fn handler) (Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		resp Response
		err  error
	}
	done := make(chan result, 1)
	late := make(chan struct{})
	t := time.AfterFunc(time.Until(deadline), func() {
		cancel()
		close(late)
	})
	defer t.Stop()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("internal error: %v; %s", r, compactStack())}
			}
		}()
		resp, err := fn(ctx, h)
		h.flushState(ctx)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-late:
		return Response{}, errGaveUp
	}
}

// Budget is how long a hook for event may take in all, its wait for
// input included: below the timeout ccm install registers for the event
// (TestBudgetsBelowTimeouts), so that a hook held up by anything (a slow
// disk, a file that never ends, a lock) gives up and exits 0 on its own
// before Claude Code kills it.
func Budget(event string) time.Duration {
	switch event {
	case SessionEnd:
		return 3 * time.Second
	case PreCompact:
		return 12 * time.Second
	}
	return 8 * time.Second
}

// compactStack returns the panicking frames on one line, for the log.
func compactStack() string {
	s := string(debug.Stack())
	if len(s) > 1500 {
		s = s[:1500]
	}
	return fmt.Sprintf("%q", s)
}

func onSessionEnd(ctx context.Context, h *Hook) (Response, error) {
	if err := h.State.Forget(ctx, h.In.SessionID(), h.Now); err != nil {
		return Response{}, fmt.Errorf("remove state: %w", err)
	}
	h.maybeGC(ctx)
	return Response{}, nil
}

func onSessionStart(ctx context.Context, h *Hook) (Response, error) {
	h.maybeGC(ctx)
	return Response{Context: h.scoped(effortContext(h))}, nil
}

// onPreToolUse adds the opus note before a subagent starts and the tool
// memory's lessons for the tool about to run.
func onPreToolUse(ctx context.Context, h *Hook) (Response, error) {
	note := h.scoped(opusNote(h))
	budget := ContextBudget(PreToolUse) - Size(note) - 2
	if l := h.lessons(ctx, budget); l != "" {
		if note != "" {
			note += "\n\n"
		}
		note += l
	}
	return Response{Context: note}, nil
}

// maybeGC sweeps idle state and old compression-cache entries now and
// then; failures are only logged.
func (h *Hook) maybeGC(ctx context.Context) {
	n, err := h.State.MaybeGC(ctx, h.Now)
	if err != nil {
		h.Log.Printf("state gc: %v", err)
		return
	}
	if n > 0 {
		h.Log.Printf("state gc: removed %d idle file(s)", n)
	}
	if n, _ := removeIdle(compressCacheDir(h.Config.Home), h.Now, 30*24*time.Hour, func(string) bool { return true }); n > 0 {
		h.Log.Printf("compression cache gc: removed %d file(s)", n)
	}
}

// scoped compresses text that is not a refresh when
// CONTEXT_COMPRESSION_SCOPE=all, as agentihooks did for every
// injection.
func (h *Hook) scoped(text string) string {
	if text == "" || h.Config.Choice("CONTEXT_COMPRESSION_SCOPE", "refresh", "all") != "all" {
		return text
	}
	return h.compress(text)
}
