package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"ccm/sessions"
	"ccm/transcript"
)

// checkOptions are the inputs of ccm check.
type checkOptions struct {
	globalOptions
	Select sessions.Selector
	Strict bool
	Quiet  bool
}

func newCheckCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "tell whether transcripts would resume cleanly",
		ArgsUsage: "[FILE|DIR...]",
		Description: `Checks each transcript the way Claude Code rebuilds it on --resume and prints
one line per problem: path:line: error|warning: what.

Errors break a resume: a Messages API rule broken on the active chain (an
unanswered tool_use, a tool_result without its tool_use, empty content or
text, thinking unsigned or with a placeholder signature) or a parentUuid
naming a missing record, which silently drops history. In subagent files,
parents in the main session are expected. Warnings do not break a resume: torn, invalid or NUL lines,
duplicate uuids, records off the active chain, a last tool call still
without a result. Without a selector every session is checked. The last
line is the verdict (36 sessions: 0 errors, 19 warnings), unless one file
was named and nothing was printed of it.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print errors only"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, true)
			if err != nil {
				return err
			}
			return runCheck(ctx, checkOptions{
				globalOptions: globals(cmd),
				Select:        sel,
				Strict:        cmd.Bool("strict"),
				Quiet:         cmd.Bool("quiet"),
			})
		},
	}
}

// checkResult is the JSON form of one file's findings.
type checkResult struct {
	Path     string        `json:"path"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Findings []jsonFinding `json:"findings"`
	Failure  string        `json:"failure,omitempty"`
}

type jsonFinding struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Text     string `json:"text"`
}

// runCheck checks every selected transcript. It returns errFindings when
// a transcript has errors (or warnings under --strict), and an I/O error
// when a file could not be read; files after a failing one are still checked.
func runCheck(ctx context.Context, o checkOptions) error {
	files, err := resolveInputs(ctx, o.globalOptions, o.Select)
	if err != nil {
		return err
	}
	boundMemory(readMemoryLimit)
	results := []checkResult{}
	var ioErr error
	failed := false
	errs, warns, unread := 0, 0, 0
	for _, in := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := checkResult{Path: in.Path, Findings: []jsonFinding{}}
		ix, err := indexFile(in.Path, transcript.BuildOptions{})
		if err != nil {
			if !in.Named && errors.Is(err, errEmptyFile) {
				// A 0-byte session is what Claude Code leaves after a
				// resume without action: nothing to resume, nothing broken.
				if !o.Quiet && !o.JSON {
					fmt.Fprintf(o.Stdout, "%s: warning: empty file\n", in.Path)
				}
				warns++
				continue
			}
			res.Failure = err.Error()
			results = append(results, res)
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
			}
			ioErr = err
			unread++
			continue
		}
		fs := transcript.Check(ix, transcript.CheckOptions{Subagent: transcript.IsSubagentPath(in.Path)})
		for _, f := range fs {
			if f.Severity == transcript.Error {
				res.Errors++
			} else {
				res.Warnings++
			}
			if o.Quiet && f.Severity != transcript.Error {
				continue
			}
			res.Findings = append(res.Findings, jsonFinding{Line: f.Line, Severity: f.Severity.String(), Code: f.Code, Text: f.Text})
			if !o.JSON {
				fmt.Fprintf(o.Stdout, "%s:%d: %s: %s\n", in.Path, f.Line, f.Severity, f.Text)
			}
		}
		if res.Errors > 0 || (o.Strict && res.Warnings > 0) {
			failed = true
		}
		errs += res.Errors
		warns += res.Warnings
		results = append(results, res)
	}
	// The verdict: always for a selection of sessions or several files;
	// one file named says nothing more when nothing was printed of it.
	printed := errs > 0 || (warns > 0 && !o.Quiet) || ioErr != nil
	if !o.JSON && (len(files) != 1 || !files[0].Named || printed) {
		fmt.Fprintln(o.Stdout, checkVerdict(o.Select, len(files), errs, warns, unread))
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, results); err != nil {
			return err
		}
	}
	if ioErr != nil {
		return silentError{code: exitError}
	}
	if failed {
		return errFindings
	}
	return nil
}

// checkVerdict is check's last line: how many transcripts (sessions,
// when sessions were selected rather than files) and what was found.
func checkVerdict(sel sessions.Selector, n, errs, warns, unread int) string {
	noun := "session"
	if len(sel.Args) > 0 {
		noun = "transcript"
	}
	s := fmt.Sprintf("%d %s: %d %s, %d %s", n, plural(n, noun), errs, plural(errs, "error"), warns, plural(warns, "warning"))
	if unread > 0 {
		s += fmt.Sprintf(", %d unreadable", unread)
	}
	return s
}
