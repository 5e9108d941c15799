package main

import (
	"fmt"
	"strings"

	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// What ccm unarchive prints, a dry run and a real run alike (docs/cli.md).
// Sessions named one by one (ids, --session, with no selector narrowing
// them) get each its line, as purge and restore of files named get each
// their report. Anything else (--all, --project, --older-than,
// --min-size) is a batch: one summary line first, whatever the number
// of sessions, and each session's line only with -v, after it.

// named reports whether the sessions were named one by one, not chosen
// by a selector: each then gets its line, and there is no summary.
func (o unarchiveOptions) named() bool {
	s := o.Select
	return (len(o.IDs) > 0 || s.Session != "") && !s.All && s.Project == "" && s.OlderThan == 0 && s.MinSize == 0
}

// unarchiveSummaryLine is a batch's summary: the sessions restored (or,
// in a dry run, to be) of those chosen, their files, the stored content
// they put into the store (a dry run verifies every archive instead),
// where from, and how many failed.
func unarchiveSummaryLine(o unarchiveOptions, where string, todo []*unarchiveItem, failed int) string {
	done, files, content := 0, 0, 0
	for _, it := range todo {
		if it.Result == "restored" || it.Result == "would restore" {
			done++
			files += it.Files
			content += it.Content
		}
	}
	if o.DryRun {
		return fmt.Sprintf("unarchive: would restore %s of %s sessions (%s files, every archive verified) from %s; %s failed",
			ui.Count(done), ui.Count(len(todo)), ui.Count(files), where, ui.Count(failed))
	}
	return fmt.Sprintf("unarchive: restored %s of %s sessions (%s files, %s stored contents) from %s; %s failed",
		ui.Count(done), ui.Count(len(todo)), ui.Count(files), ui.Count(content), where, ui.Count(failed))
}

// unarchivedLine is one session's line: what came back (or would), and
// where to.
func unarchivedLine(o unarchiveOptions, it *unarchiveItem) string {
	verb, detail := "restored", ""
	switch {
	case o.DryRun:
		verb, detail = "would restore", ", its archive verified"
	case it.Content > 0:
		detail = fmt.Sprintf(", %s stored contents", ui.Count(it.Content))
	}
	from := ""
	if o.From != "" {
		from = " from " + it.Archive + " (the archive stays there)"
	}
	return fmt.Sprintf("%s %s (%s files%s) to %s%s", verb, it.Session, ui.Count(it.Files), detail, shortHome(it.Project), from)
}

// printUnarchiveHead prints what a run says first: each session's line
// when they were named, else the summary; then the ids named whose
// session is in place already.
func printUnarchiveHead(o unarchiveOptions, where string, todo, here []*unarchiveItem, failed int) {
	if o.named() {
		for _, it := range todo {
			if it.Result == "restored" || it.Result == "would restore" { // a failure was said
				fmt.Fprintln(o.Stdout, unarchivedLine(o, it))
			}
		}
	} else {
		fmt.Fprintln(o.Stdout, unarchiveSummaryLine(o, where, todo, failed))
	}
	for _, it := range here {
		fmt.Fprintf(o.Stdout, "%s is in place already (no archive of it is left)\n", it.Session)
	}
}

// printUnarchived prints what a real run did: its head, then, when a
// session came back, for how long archive and maintain leave it (one
// line, whatever the number of sessions: part of the summary), and with
// -v, after a batch's summary, each session in the order of the
// archives (their paths, or their keys in the bucket).
func printUnarchived(o unarchiveOptions, where string, todo, here []*unarchiveItem, failed int, ret sessions.Retention) {
	printUnarchiveHead(o, where, todo, here, failed)
	for _, it := range todo {
		if it.Result == "restored" {
			fmt.Fprintf(o.Stdout, "ccm archive and maintain leave the restored sessions here until they are left alone for %s, counted from now\n",
				ui.Age(archiveAge(o.globalOptions, ret)))
			break
		}
	}
	if !o.Verbose || o.named() {
		return
	}
	for _, it := range todo {
		if it.Result == "failed" {
			fmt.Fprintf(o.Stdout, "failed %s: %s\n", it.Session, it.Error)
			continue
		}
		fmt.Fprintln(o.Stdout, unarchivedLine(o, it))
	}
}

// warnRestored says on stderr, as each session comes back, what is not
// as it was archived: files kept (written since an interrupted unarchive
// put them back), a session the sweep would delete, stubs that stay
// stubs.
func warnRestored(o unarchiveOptions, it *unarchiveItem, x *archive.Extracted) {
	for _, k := range x.Kept {
		fmt.Fprintf(o.Stderr, "ccm: warning: %s: kept %s, written since an interrupted unarchive put it back\n", it.Session, k)
	}
	if it.Warning != "" {
		fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s\n", it.Session, it.Warning)
	}
	n := len(it.StaysStub)
	switch {
	case n == 0:
	case len(it.BadContent) > 0:
		fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s stubs stay stubs, their content is missing or corrupt in the archive and not in the store: %s\n",
			it.Session, ui.Count(n), strings.Join(it.StaysStub, ", "))
	case it.OldFormat:
		fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s stubs stay stubs: the archive (made by an older ccm) does not carry their content, and the store does not have it\n", it.Session, ui.Count(n))
	default:
		fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s stubs stay stubs: their content was not in the store when the session was archived\n", it.Session, ui.Count(n))
	}
}
