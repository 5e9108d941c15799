package archive

import (
	"path/filepath"
	"strings"
	"time"

	"ccm/sessions"
)

// Select picks the archives a selector chooses, from their manifests:
// each of ids (whole or a unique prefix; --session is one more) and, when
// none is given, every archive --project, --older-than and --min-size
// keep (their last write, their files' total size). An archive whose
// manifest cannot be read is kept when no id is given, so that it is
// reported. missing are the ids no archive matched.
func Select(list []Listed, ids []string, sel sessions.Selector, now time.Time) (picked []Listed, missing []string, err error) {
	if sel.Session != "" {
		ids = append(append([]string(nil), ids...), sel.Session)
	}
	keep := func(l Listed) bool {
		m := l.Manifest
		switch {
		case m == nil:
			// Unreadable: kept only where nothing narrows, to be reported.
			return len(ids) == 0 && sel.Project == "" && sel.OlderThan == 0 && sel.MinSize == 0
		case sel.Project != "" && !sessions.MatchProject(sel.Project, m.Project, m.Folder):
		case sel.OlderThan > 0 && now.Sub(m.LastModified) < sel.OlderThan:
		case sel.MinSize > 0 && m.Bytes < sel.MinSize:
		default:
			return true
		}
		return false
	}
	if len(ids) == 0 {
		for _, l := range list {
			if keep(l) {
				picked = append(picked, l)
			}
		}
		return picked, nil, nil
	}
	var matches []sessions.Match
	byPath := map[string]Listed{}
	for _, l := range list {
		id := l.id()
		if id == "" {
			continue
		}
		folder := filepath.Base(filepath.Dir(l.Path))
		matches = append(matches, sessions.Match{ID: id, Folder: folder, Path: l.Path})
		byPath[l.Path] = l
	}
	seen := map[string]bool{}
	for _, id := range ids {
		id, err := sessions.CheckID(id)
		if err != nil {
			return nil, nil, err
		}
		m, ok, err := sessions.MatchID(id, matches)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			missing = append(missing, id)
			continue
		}
		if l := byPath[m.Path]; !seen[m.Path] && keep(l) {
			seen[m.Path] = true
			picked = append(picked, l)
		}
	}
	return picked, missing, nil
}

// id is the session an archive holds: its manifest's, else its name's.
func (l Listed) id() string {
	if l.Manifest != nil {
		return l.Manifest.Session
	}
	base := filepath.Base(l.Path)
	if !strings.HasSuffix(base, Ext) {
		return ""
	}
	return strings.TrimSuffix(base, Ext)
}
