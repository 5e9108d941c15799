package archive

import (
	"strings"
	"testing"
	"time"

	"ccm/sessions"
)

// The policy keeps what is live, young or brought back lately, fails
// what cannot be read and archives the rest, saying when Claude Code's
// sweep would delete it; with no age (sessions named on the command
// line) only liveness keeps one.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	ret := sessions.Retention{Days: 30}
	row := func(id string, idle time.Duration) *sessions.Row {
		return &sessions.Row{ID: id, ModTime: now.Add(-idle)}
	}
	live := row("live", 40*day)
	live.Live, live.LiveReason = true, "open for writing by another process"
	bad := row("bad", 40*day)
	bad.Error = "not a transcript"
	rows := []*sessions.Row{live, row("young", 3*day), row("back", 40*day), bad, row("old", 25*day), row("swept", 31*day)}
	back := &Unarchived{Sessions: map[string]time.Time{"back": now.Add(-2 * day)}}

	want := []struct {
		archive bool
		reason  string
	}{
		{false, "live: open for writing by another process"},
		{false, "written 3d ago, under 23d"},
		{false, "unarchived 2d ago, under 23d"},
		{false, "unreadable: not a transcript"},
		{true, "not written for 25d (limit 23d); Claude Code would delete it in 5d"},
		{true, "not written for 31d (limit 23d); due for Claude Code's sweep"},
	}
	ds := Decide(rows, Policy{Age: DefaultAge(ret), Retention: ret, Unarchived: back, Now: now})
	for i, d := range ds {
		if d.Archive != want[i].archive || d.Reason != want[i].reason {
			t.Errorf("%s: archive %v, %q; want %v, %q", d.Row.ID, d.Archive, d.Reason, want[i].archive, want[i].reason)
		}
	}
	if ds[3].Unreadable != "not a transcript" {
		t.Errorf("unreadable = %q", ds[3].Unreadable)
	}

	ds = Decide(rows, Policy{Retention: ret, Unarchived: back, Now: now})
	for _, d := range ds {
		archived := d.Row.ID != "live" && d.Row.ID != "bad"
		if d.Archive != archived {
			t.Errorf("no age: %s archive %v (%s)", d.Row.ID, d.Archive, d.Reason)
		}
		if archived && !strings.HasPrefix(d.Reason, "named; not written for ") {
			t.Errorf("no age: %s reason %q", d.Row.ID, d.Reason)
		}
	}
}

// The default age stays ahead of the sweep: a week before it, or half of
// it when the period is under two weeks.
func TestDefaultAge(t *testing.T) {
	for _, c := range []struct {
		days float64
		want time.Duration
	}{{30, 23 * 24 * time.Hour}, {14, 7 * 24 * time.Hour}, {10, 5 * 24 * time.Hour}, {1, 12 * time.Hour}} {
		if got := DefaultAge(sessions.Retention{Days: c.days}); got != c.want {
			t.Errorf("%g days: %v, want %v", c.days, got, c.want)
		}
	}
}
