package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"ccm/transcript"
)

// checkOptions are the inputs of ccm check.
type checkOptions struct {
	globalOptions
	inputOptions
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
text, unsigned thinking) or a parentUuid naming a missing record, which
silently drops history. In subagent files, parents in the main session are
expected. Warnings do not break a resume: torn, invalid or NUL lines,
duplicate uuids, records off the active chain, placeholder signatures.
Directories are walked for *.jsonl: <claude dir>/projects and the folders
inside it (after resolving symlinks); --recursive allows any other folder.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "current", Usage: "check the newest session of the working directory"},
			&cli.StringFlag{Name: "session", Usage: "check the session with this id"},
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"R"}, Usage: "also walk folders outside <claude dir>/projects"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print errors only"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runCheck(ctx, checkOptions{
				globalOptions: globals(cmd),
				inputOptions:  inputOptions{Args: cmd.Args().Slice(), Current: cmd.Bool("current"), Session: cmd.String("session"), Dirs: true, AnyDir: cmd.Bool("recursive")},
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
	files, err := resolveInputs(o.globalOptions, o.inputOptions)
	if err != nil {
		return err
	}
	boundMemory(readMemoryLimit)
	var results []checkResult
	var ioErr error
	failed := false
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
				continue
			}
			res.Failure = err.Error()
			results = append(results, res)
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
			}
			ioErr = err
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
		results = append(results, res)
	}
	if o.JSON {
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
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
