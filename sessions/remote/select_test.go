package remote

import (
	"errors"
	"slices"
	"testing"
	"time"

	"ccm/sessions"
	"ccm/sessions/archive"
)

// Listing.Select chooses remote archives by the selectors of local ones:
// whole ids or unique prefixes, the project, the age; a session two
// machines archived counts once, by its newest archive, unless every
// machine's archive is asked for (a listing).
func TestListingSelect(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	entry := func(machine, folder, project, id string, created, modified time.Time) Listed {
		return Listed{Machine: machine, Key: "team/" + machine + "/" + folder + "/" + id + ".0123456789abcdef" + archive.Ext,
			Manifest: &archive.Manifest{Session: id, Folder: folder, Project: project, Created: created, LastModified: modified}}
	}
	const (
		shared = "4d5611e5-0000-4000-8000-000000000001"
		other  = "4d5611e6-0000-4000-8000-000000000002"
		third  = "9a9a9a9a-0000-4000-8000-000000000003"
	)
	old, older := now.Add(-48*time.Hour), now.Add(-30*24*time.Hour)
	l := &Listing{Archives: []Listed{
		entry("laptop", "-home-dev-app", "/home/dev/app", shared, old, older),
		entry("desktop", "-home-dev-app", "/home/dev/app", shared, now.Add(-time.Hour), now.Add(-2*time.Hour)),
		entry("laptop", "-home-dev-app", "/home/dev/app", other, old, older),
		entry("ci", "-srv-api", "/srv/api", third, old, older),
	}}
	machines := func(ls []Listed) (out []string) {
		for _, x := range ls {
			out = append(out, x.Machine+":"+x.Manifest.Session[:8])
		}
		return out
	}
	for _, c := range []struct {
		name  string
		ids   []string
		sel   sessions.Selector
		every bool
		want  []string
	}{
		{"a whole id, the newest archive", []string{shared}, sessions.Selector{}, false, []string{"desktop:4d5611e5"}},
		{"a whole id, every machine's", []string{shared}, sessions.Selector{}, true, []string{"laptop:4d5611e5", "desktop:4d5611e5"}},
		{"a unique prefix", []string{"9a9a"}, sessions.Selector{}, false, []string{"ci:9a9a9a9a"}},
		{"--session", nil, sessions.Selector{Session: "4d5611e6"}, false, []string{"laptop:4d5611e6"}},
		{"--project", nil, sessions.Selector{Project: "/home/dev/app"}, false, []string{"desktop:4d5611e5", "laptop:4d5611e6"}},
		{"--older-than by the newest", nil, sessions.Selector{All: true, OlderThan: 7 * 24 * time.Hour}, true, []string{"laptop:4d5611e6", "ci:9a9a9a9a"}},
	} {
		got, missing, err := l.Select(c.ids, c.sel, now, c.every)
		if err != nil || len(missing) > 0 {
			t.Errorf("%s: %v, missing %v", c.name, err, missing)
			continue
		}
		if g := machines(got); !slices.Equal(g, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, g, c.want)
		}
	}
	var ae *sessions.AmbiguousError
	if _, _, err := l.Select([]string{"4d5611"}, sessions.Selector{}, now, false); !errors.As(err, &ae) {
		t.Errorf("a prefix of two sessions: %v, want an AmbiguousError", err)
	}
	if _, missing, err := l.Select([]string{"0000dead"}, sessions.Selector{}, now, false); err != nil || len(missing) != 1 {
		t.Errorf("an id of no archive: %v %v, want it missing", err, missing)
	}
}
