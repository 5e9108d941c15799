package remote

import (
	"time"

	"ccm/sessions"
	"ccm/sessions/archive"
)

// Select picks the archives ids and sel choose, by archive.Select's rules
// (whole ids or unique prefixes, --project, --older-than, --min-size), as
// for a local folder. A session several machines archived is chosen by
// its newest archive; every then gives each machine's archive of every
// session chosen (a listing), else the newest alone (a restore).
func (l *Listing) Select(ids []string, sel sessions.Selector, now time.Time, every bool) (picked []Listed, missing []string, err error) {
	newest := map[string]int{}
	var order []string
	for i, a := range l.Archives {
		id := a.Manifest.Session
		j, ok := newest[id]
		if !ok {
			order = append(order, id)
		}
		if !ok || a.Manifest.Created.After(l.Archives[j].Manifest.Created) {
			newest[id] = i
		}
	}
	cands := make([]archive.Listed, 0, len(order))
	for _, id := range order {
		a := l.Archives[newest[id]]
		cands = append(cands, archive.Listed{Path: a.Key, Manifest: a.Manifest})
	}
	chosen, missing, err := archive.Select(cands, ids, sel, now)
	if err != nil {
		return nil, nil, err
	}
	take := map[string]bool{}
	for _, c := range chosen {
		take[c.Manifest.Session] = true
	}
	for i, a := range l.Archives {
		if take[a.Manifest.Session] && (every || newest[a.Manifest.Session] == i) {
			picked = append(picked, a)
		}
	}
	return picked, missing, nil
}
