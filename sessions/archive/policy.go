package archive

import (
	"ccm/internal/ui"
	"fmt"
	"time"

	"ccm/sessions"
)

// Policy says which of the selected sessions ccm archive moves into
// archives; the selection (sessions.Select) has already applied
// --project, --older-than and --min-size. The zero Age archives every
// session that is not live: sessions named on the command line when no
// --older-than was given.
type Policy struct {
	// Age keeps a session written, or brought back by unarchive, less
	// than this long ago.
	Age time.Duration
	// Retention is Claude Code's sweep, named in the reasons.
	Retention sessions.Retention
	// Unarchived says when sessions were brought back.
	Unarchived *Unarchived
	Now        time.Time
}

// DefaultAge keeps ccm ahead of Claude Code's sweep: a week before it, or
// half the period when that is shorter than two weeks.
func DefaultAge(ret sessions.Retention) time.Duration {
	p := ret.Period()
	margin := min(7*24*time.Hour, p/2)
	return p - margin
}

// Decision is what the policy says of one session.
type Decision struct {
	Row     *sessions.Row
	Archive bool
	Reason  string
	// Unreadable is set (to why) for a session whose transcript could not
	// be read: it fails, and the rest is archived.
	Unreadable string
}

// Decide applies the policy to each row, in order: a live session is
// kept (nothing of it is touched), so is one written or unarchived within
// Age, and an unreadable one fails; every other is archived, with the
// reason and when Claude Code's sweep would delete it.
func Decide(rows []*sessions.Row, pol Policy) []Decision {
	out := make([]Decision, 0, len(rows))
	for _, r := range rows {
		d := Decision{Row: r}
		idle := pol.Now.Sub(r.ModTime)
		var unarchived time.Time
		if pol.Unarchived != nil {
			unarchived = pol.Unarchived.Since(r.ID)
		}
		switch {
		case r.Live:
			d.Reason = "live: " + r.LiveReason
		case pol.Age > 0 && unarchived.After(r.ModTime) && pol.Now.Sub(unarchived) < pol.Age:
			d.Reason = fmt.Sprintf("unarchived %s ago, under %s", ui.Age(pol.Now.Sub(unarchived)), ui.Age(pol.Age))
		case pol.Age > 0 && idle < pol.Age:
			d.Reason = fmt.Sprintf("written %s ago, under %s", ui.Age(idle), ui.Age(pol.Age))
		case r.Error != "":
			d.Reason, d.Unreadable = "unreadable: "+r.Error, r.Error
		default:
			d.Archive = true
			if pol.Age > 0 {
				d.Reason = fmt.Sprintf("not written for %s (limit %s)", ui.Age(idle), ui.Age(pol.Age))
			} else {
				d.Reason = fmt.Sprintf("named; not written for %s", ui.Age(idle))
			}
			switch at := pol.Retention.SweepAt(r.ModTime); {
			case at.IsZero():
			case at.Before(pol.Now):
				d.Reason += "; due for Claude Code's sweep"
			default:
				d.Reason += fmt.Sprintf("; Claude Code would delete it in %s", ui.Age(at.Sub(pol.Now)))
			}
		}
		out = append(out, d)
	}
	return out
}
