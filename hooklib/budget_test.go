package hooklib

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/hooklib/install"
	"ccm/internal/fsutil"
)

// TestHookGivesUpAtBudget: a hook held up past its budget (here by the
// state lock, which another process holds longer than the budget) stops
// waiting, logs it and exits 0 with no output, before its own lock wait
// would have ended.
func TestHookGivesUpAtBudget(t *testing.T) {
	s := newSandbox(t)
	lk, err := fsutil.LockFile(context.Background(), filepath.Join(s.home(), "state", ".lock"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	var out bytes.Buffer
	code := Run(context.Background(), Options{Event: UserPromptSubmit, ClaudeDir: s.claude, Stdin: strings.NewReader(s.in(UserPromptSubmit, map[string]any{"prompt": "go on"})),
		Stdout: &out, Lookup: s.env.lookup, Now: func() time.Time { return s.now }, Budget: 200 * time.Millisecond})
	if code != 0 || out.Len() != 0 {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	if log := s.log(); !strings.Contains(log, "gave up after 200ms, the budget of a UserPromptSubmit hook") {
		t.Errorf("log:\n%s", log)
	}
}

// TestBudgetsBelowTimeouts: every event's budget ends before the timeout
// ccm install registers for it, so the hook gives up before Claude Code
// kills it.
func TestBudgetsBelowTimeouts(t *testing.T) {
	for _, r := range install.Registrations() {
		if b, limit := Budget(r.Event), time.Duration(r.Timeout)*time.Second; b >= limit-time.Second {
			t.Errorf("%s: budget %s, registered timeout %s", r.Event, b, limit)
		}
	}
}
