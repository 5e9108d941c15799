package main

import (
	"bufio"
	"fmt"
	"strconv"
	"time"

	"ccm/search"
)

// writeHits prints hits to g's stdout. On a terminal: grouped by session
// (sessions in the order of their newest hit), a header line per session
// with how to resume it, then one line per hit with the match
// highlighted. Piped: one tab-separated line per hit, for scripts: time
// (RFC 3339), project, session (whole), line, kind, tool, snippet.
func writeHits(g globalOptions, hits []search.Hit) error {
	bw := bufio.NewWriter(g.Stdout)
	if !g.Terminal {
		for _, h := range hits {
			tm := ""
			if !h.Time.IsZero() {
				tm = h.Time.Local().Format(time.RFC3339)
			}
			fmt.Fprintf(bw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", tm, h.Project, h.Session, h.Line, h.Kind, h.Tool, h.Snippet)
		}
		return bw.Flush()
	}
	type group struct {
		key  string
		hits []search.Hit
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, h := range hits {
		k := h.Session + "\x00" + h.Path
		grp := byKey[k]
		if grp == nil {
			grp = &group{key: k}
			byKey[k] = grp
			groups = append(groups, grp)
		}
		grp.hits = append(grp.hits, h)
	}
	for i, grp := range groups {
		h := grp.hits[0]
		if i > 0 {
			bw.WriteByte('\n')
		}
		state := ""
		if h.Archived {
			state = "  (archived)"
		}
		if h.Machine != "" {
			state = "  (archived on " + h.Machine + ")"
		}
		fmt.Fprintf(bw, "\x1b[1m%s\x1b[0m  %s%s\n", shortHome(h.Project), shortID(g, h.Session), state)
		for _, h := range grp.hits {
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
	return bw.Flush()
}
