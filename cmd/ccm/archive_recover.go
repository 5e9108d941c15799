package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"ccm/ccm"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// archiveAge is the age past which ccm archive takes a session when no
// --older-than is given: CCM_ARCHIVE_OLDER_THAN_DAYS, else a week before
// Claude Code's cleanupPeriodDays.
func archiveAge(g globalOptions, ret sessions.Retention) time.Duration {
	if d := maintainConfig(g).Number("CCM_ARCHIVE_OLDER_THAN_DAYS"); d >= 0 {
		return time.Duration(d * 24 * float64(time.Hour))
	}
	return archive.DefaultAge(ret)
}

// recoverArchives finishes or undoes the archives and unarchives an
// earlier run left unfinished (killed, crashed), before a run plans its
// own work. Each is said on stdout unless quiet; one that cannot be
// recovered is a failed item of errs (said on stderr and counted), and
// counted in the result.
//
// Besides root it recovers the staging folders of archives on their way
// to and from object storage: whichever command runs next finishes what a
// killed archive --to s3:// or unarchive --from s3:// left.
func recoverArchives(ctx context.Context, o globalOptions, root string, st *ccm.Store, now time.Time, quiet bool, errs *itemErrors) ([]archive.Recovered, int, error) {
	roots := []string{root}
	for _, kind := range []string{"archive", "unarchive"} {
		if dir := remoteStagePath(o, kind); dir != root {
			roots = append(roots, dir) // a missing one has nothing to recover
		}
	}
	var rec []archive.Recovered
	for _, r := range roots {
		got, err := archive.Recover(ctx, r, o.ClaudeDir, archive.ExtractOptions{Store: st, Now: now})
		rec = append(rec, got...)
		if err != nil {
			return rec, 0, err
		}
	}
	archive.TidyUnarchived(unarchivedPath(o))
	failed := 0
	var back []string
	for _, r := range rec {
		if r.Err == nil && r.Op == "unarchive" && r.Outcome == "finished" {
			back = append(back, r.Session)
		}
		if r.Err != nil {
			if errs.add(fmt.Errorf("%s: interrupted %s: %w", r.Session, r.Op, r.Err)) {
				failed++
			}
			continue
		}
		if !quiet && !o.JSON {
			fmt.Fprintf(o.Stdout, "recovered  %s  %s an interrupted %s\n", r.Session, r.Outcome, r.Op)
		}
	}
	if len(back) > 0 {
		if _, err := noteUnarchived(o, back, now); err != nil {
			return rec, failed, err
		}
	}
	return rec, failed, nil
}

// noteUnarchived records now as the unarchive time of sessions. undo
// brings the record back to what it was, with now recorded for kept
// only (the sessions that did come back).
func noteUnarchived(g globalOptions, ids []string, now time.Time) (undo func(kept []string) error, err error) {
	path := unarchivedPath(g)
	back, err := archive.ReadUnarchived(path)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Lstat(path)
	before := maps.Clone(back.Sessions)
	for _, id := range ids {
		back.Sessions[id] = now
	}
	if err := back.Save(path); err != nil {
		return nil, err
	}
	return func(kept []string) error {
		back.Sessions = maps.Clone(before)
		for _, id := range kept {
			back.Sessions[id] = now
		}
		if len(kept) == 0 && statErr != nil {
			return os.Remove(path)
		}
		return back.Save(path)
	}, nil
}

// unarchivedPath is the record of when sessions were unarchived.
func unarchivedPath(g globalOptions) string {
	return filepath.Join(ccmHome(g), archive.UnarchivedName)
}

// forgetUnarchived drops from the unarchive record the sessions archived
// again and, when every session was looked at (inPlace not nil), those
// no longer in place.
func forgetUnarchived(o archiveOptions, back *archive.Unarchived, inPlace map[string]bool, todo []*archivePlanItem) error {
	if len(back.Sessions) == 0 {
		return nil
	}
	keep := map[string]bool{}
	if inPlace == nil {
		for id := range back.Sessions {
			keep[id] = true
		}
	} else {
		for id := range inPlace {
			keep[id] = true
		}
	}
	for _, it := range todo {
		if it.Result == "archived" {
			keep[it.Session] = false
		}
	}
	changed := false
	for id := range back.Sessions {
		if !keep[id] {
			delete(back.Sessions, id)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return back.Save(unarchivedPath(o.globalOptions))
}
