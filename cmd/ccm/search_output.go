package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"ccm/search"
)

// writeHits prints hits. On a terminal: grouped by session (sessions in
// the order of their newest hit), a header line per session with how to
// resume it, then one line per hit with the match highlighted. Piped: one
// tab-separated line per hit: time, project, session, line, kind, tool,
// snippet.
func writeHits(w io.Writer, hits []search.Hit, term bool) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	if !term {
		for _, h := range hits {
			tm := ""
			if !h.Time.IsZero() {
				tm = h.Time.Local().Format("2006-01-02T15:04:05")
			}
			fmt.Fprintf(bw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", tm, h.Project, h.Session, h.Line, h.Kind, h.Tool, h.Snippet)
		}
		return
	}
	type group struct {
		key  string
		hits []search.Hit
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, h := range hits {
		k := h.Session + "\x00" + h.Path
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.hits = append(g.hits, h)
	}
	for i, g := range groups {
		h := g.hits[0]
		if i > 0 {
			bw.WriteByte('\n')
		}
		state := ""
		if h.Archived {
			state = "  (archived)"
		}
		fmt.Fprintf(bw, "\x1b[1m%s\x1b[0m  %s%s\n", shortHome(h.Project), shortID(h.Session), state)
		for _, h := range g.hits {
			when := ""
			if !h.Time.IsZero() {
				when = h.Time.Local().Format("2006-01-02 15:04")
			}
			who := h.Kind
			if h.Tool != "" {
				who += " " + h.Tool
			}
			if h.Agent != "" {
				who += " (subagent " + h.Agent + ")"
			}
			snip := h.Snippet
			if h.Mark[1] > h.Mark[0] && h.Mark[1] <= len(snip) {
				snip = snip[:h.Mark[0]] + "\x1b[1;31m" + snip[h.Mark[0]:h.Mark[1]] + "\x1b[0m" + snip[h.Mark[1]:]
			}
			fmt.Fprintf(bw, "  %s  %-7s %-18s %s\n", when, "#"+strconv.Itoa(h.Line), who, snip)
		}
		fmt.Fprintf(bw, "  \x1b[2m%s\x1b[0m\n", h.Resume)
	}
}

// shortID is the 8-character form of a session id that tables show.
func shortID(id string) string {
	if len(id) > 8 && !strings.ContainsAny(id[:8], "/\\") {
		return id[:8]
	}
	return id
}
