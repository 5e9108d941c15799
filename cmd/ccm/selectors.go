package main

import (
	"ccm/internal/ui"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/sessions"
)

// selectorFlags are the flags by which every command that takes sessions
// is told which: the one wording of them, for every such command's help
// (docs/sessions.md says the same). FILE|DIR... are the arguments.
func selectorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "current", Aliases: []string{"c"}, Usage: "the newest session of the working directory"},
		&cli.StringFlag{Name: "session", Usage: "the session with this `ID`, or the one whose id starts with it (4 characters or more)"},
		&cli.StringFlag{Name: "project", Usage: "only sessions of project `P`: its path or its folder name"},
		&cli.BoolFlag{Name: "all", Usage: "every session of every project"},
		&cli.StringFlag{Name: "older-than", Usage: "only sessions not written for `AGE` (90m, 36h, 7d)"},
		&cli.StringFlag{Name: "min-size", Usage: "only sessions of at least `SIZE` (500KB, 10MB)"},
		&cli.BoolFlag{Name: "recursive", Aliases: []string{"R"}, Usage: "also walk folders outside <claude dir>/projects"},
	}
}

// archivedSelectorFlags are the selectors of archived sessions
// (unarchive): ids are the arguments, and --current and --recursive,
// which name sessions in place, do not apply.
func archivedSelectorFlags() []cli.Flag { return selectorFlagsBut("current", "recursive") }

// searchSelectorFlags are the selectors of ccm search: its arguments are
// the query, and it finds messages, whose sessions --older-than and
// --min-size do not narrow usefully (--since does, by message).
func searchSelectorFlags() []cli.Flag {
	return selectorFlagsBut("older-than", "min-size", "recursive")
}

// selectorFlagsBut is selectorFlags without the flags named.
func selectorFlagsBut(names ...string) []cli.Flag {
	var out []cli.Flag
	for _, f := range selectorFlags() {
		if !slices.Contains(names, f.Names()[0]) {
			out = append(out, f)
		}
	}
	return out
}

// selectorHelp is appended to the description of every command that
// takes sessions; docs/sessions.md holds the same text
// (TestSelectorHelpInDocs).
const selectorHelp = `SESSIONS:
   FILE|DIR..., --current, --session ID and --all say which sessions to
   work on, one of them at a time; --project, --older-than and
   --min-size narrow what they chose, and alone they narrow every
   session. A folder is walked for *.jsonl (subagent transcripts too):
   <claude dir>/projects or a folder inside it, any other only with
   --recursive. A project folder that is a symlink is a project like the
   others; no other symlink is followed. A session id may be shortened to
   a prefix of 4 characters or more that starts no other session's id.
   Durations take a unit: ms, s, m, h, d or w (90m, 36h, 7d, 1h30m); sizes
   are in bytes, KB, MB or GB (powers of 1000) or KiB, MiB, GiB. A session
   is live while it was written in the last 2 minutes or another process
   holds it open for writing.`

// selectorFrom reads the selector flags and arguments of cmd. A command
// that works on every session by default (check, sessions, archive)
// passes defaultAll: with nothing given, it selects --all.
func selectorFrom(cmd *cli.Command, defaultAll bool) (sessions.Selector, error) {
	sel := sessions.Selector{
		Args:      cmd.Args().Slice(),
		Current:   cmd.Bool("current"),
		Session:   cmd.String("session"),
		Project:   cmd.String("project"),
		All:       cmd.Bool("all"),
		Recursive: cmd.Bool("recursive"),
	}
	if cmd.IsSet("older-than") {
		d, err := parseDuration("older-than", cmd.String("older-than"))
		if err != nil {
			return sel, err
		}
		sel.OlderThan = d
	}
	if cmd.IsSet("min-size") {
		n, err := parseSize(cmd.String("min-size"))
		if err != nil {
			return sel, usagef("--min-size: %v", err)
		}
		sel.MinSize = n
	}
	if cmd.IsSet("session") && sel.Session == "" {
		return sel, usagef("--session: give a session id")
	}
	if cmd.IsSet("project") && sel.Project == "" {
		return sel, usagef("--project: give a project path or folder name")
	}
	if defaultAll && !sel.Given() {
		sel.All = true
	}
	return sel, nil
}

// selectSessions resolves a selector by the one model of the config dir
// (sessions.Select), with the CLI's wording of its errors: a wrong
// selection or a session id that names none or several is a usage error
// (exit 2).
func selectSessions(ctx context.Context, g globalOptions, sel sessions.Selector, o sessions.SelectOptions) (*sessions.Selection, error) {
	s, err := sessions.Select(ctx, g.ClaudeDir, sel, o)
	var ue *sessions.UsageError
	var fe *sessions.FileError
	var ae *sessions.AmbiguousError
	switch {
	case err == nil:
		return s, nil
	case errors.As(err, &ue):
		return nil, usagef("%s", ue.Msg)
	case errors.As(err, &fe):
		return nil, fileError(fe.Path, fe.Err)
	case errors.As(err, &ae):
		return nil, usagef("%s", ae.Error())
	case errors.Is(err, sessions.ErrNoSession), errors.Is(err, sessions.ErrInvalidID):
		return nil, usagef("%s", err.Error())
	}
	return nil, err
}

// sessionIDError words an error of a session id looked up outside the
// config dir's folders (archive.Select, search's index) as selectSessions
// does: a wrong id is a usage error.
func sessionIDError(err error) error {
	var ae *sessions.AmbiguousError
	if errors.As(err, &ae) || errors.Is(err, sessions.ErrInvalidID) || errors.Is(err, sessions.ErrNoSession) {
		return usagef("%s", err.Error())
	}
	return err
}

// resolveInputs is selectSessions for a command that reads each selected
// transcript in turn and stops at the first that cannot be found: the
// transcripts to work on, in order.
func resolveInputs(ctx context.Context, g globalOptions, sel sessions.Selector) ([]sessions.Target, error) {
	s, err := selectSessions(ctx, g, sel, sessions.SelectOptions{})
	if err != nil {
		return nil, err
	}
	if err := s.Err(); err != nil {
		var fe *sessions.FileError
		if errors.As(err, &fe) {
			return nil, fileError(fe.Path, fe.Err)
		}
		return nil, err
	}
	return s.Todo, nil
}

// noSessionsMatch is what a command says when its selectors chose no
// session: not an error, the command's nothing to do (docs/cli.md). It
// names the narrowing selectors given, which most often explain it.
func noSessionsMatch(sel sessions.Selector) string {
	var by []string
	if sel.Project != "" {
		by = append(by, "--project "+sel.Project)
	}
	if sel.OlderThan > 0 {
		by = append(by, "--older-than "+ui.Age(sel.OlderThan))
	}
	if sel.MinSize > 0 {
		by = append(by, "--min-size "+ui.Bytes(sel.MinSize))
	}
	return strings.Join(append([]string{"no sessions match"}, by...), " ")
}

// sayNoSessions prints noSessionsMatch on stdout for a command whose
// output says nothing else when it has no session to show (analyze,
// audit, report); under --json the command's empty document says it.
func sayNoSessions(g globalOptions, sel sessions.Selector) {
	if !g.JSON {
		fmt.Fprintln(g.Stdout, noSessionsMatch(sel))
	}
}

// durationUnits says which units a duration takes, for errors.
const durationUnits = "say 90m, 36h or 7d: ms, s, m, h, d or w"

// parseDuration reads a duration for flag: a number and a unit, or
// several (1h30m): ms, s, m, h, d (24 hours) or w (7 days); "0" alone
// needs none. The same units everywhere: --older-than, clean's
// --backups-older-than, --lock-wait.
func parseDuration(flag, s string) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "0" {
		return 0, nil
	}
	var total float64
	rest := t
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && rest[j] >= 'a' && rest[j] <= 'z' {
			j++
		}
		if i == 0 {
			return 0, usagef("--%s: %q is not a duration (%s)", flag, s, durationUnits)
		}
		if j == i {
			if j == len(rest) {
				return 0, usagef("--%s: %q has no unit (%s)", flag, s, durationUnits)
			}
			return 0, usagef("--%s: %q is not a duration (%s)", flag, s, durationUnits)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, usagef("--%s: %q is not a duration (%s)", flag, s, durationUnits)
		}
		var unit time.Duration
		switch rest[i:j] {
		case "ms":
			unit = time.Millisecond
		case "s":
			unit = time.Second
		case "m":
			unit = time.Minute
		case "h":
			unit = time.Hour
		case "d":
			unit = 24 * time.Hour
		case "w":
			unit = 7 * 24 * time.Hour
		default:
			return 0, usagef("--%s: %q: unknown unit %q (%s)", flag, s, rest[i:j], durationUnits)
		}
		total += n * float64(unit)
		rest = rest[j:]
	}
	if math.IsNaN(total) || math.IsInf(total, 0) || total > float64(100*365*24*time.Hour) {
		return 0, usagef("--%s: %q is too long (100 years at most)", flag, s)
	}
	return time.Duration(total), nil
}

// parseSize reads sizes such as 500, 10KB, 1.5MB, 2GB (powers of 1000;
// KiB, MiB, GiB are powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size (try 10MB)", s)
	}
	return int64(f * mult), nil
}

// lockWaitFlag is --lock-wait, a duration in the same units as the
// others.
func lockWaitFlag() cli.Flag {
	return &cli.StringFlag{Name: "lock-wait", Value: ui.Age(ccm.DefaultLockWait), Usage: "how long to wait for the store lock (`DURATION`: 200ms, 10s, 2m)"}
}

// skipReason words why the narrowing selectors left a transcript out.
func skipReason(s sessions.Skipped, sel sessions.Selector, now time.Time) string {
	switch s.Why {
	case sessions.NotInProject:
		return "not in project " + sel.Project
	case sessions.TooRecent:
		return fmt.Sprintf("written %s ago, under --older-than %s", ui.Age(now.Sub(s.File.ModTime)), ui.Age(sel.OlderThan))
	case sessions.TooSmall:
		return fmt.Sprintf("%s, under --min-size %s", ui.Bytes(s.Size), ui.Bytes(sel.MinSize))
	}
	return ""
}
