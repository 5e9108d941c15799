package main

import (
	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/urfave/cli/v3"

	"ccm/internal/tokens"
	"ccm/report"
	"ccm/sessions"
	"ccm/transcript"
)

// analyzeOptions are the inputs of ccm analyze.
type analyzeOptions struct {
	globalOptions
	Select   sessions.Selector
	Top      int
	NoTokens bool
	ASCII    bool
}

func newAnalyzeCommand() *cli.Command {
	return &cli.Command{
		Name:      "analyze",
		Usage:     "show what takes the space in a transcript and what would break a resume",
		ArgsUsage: "[FILE|DIR...]",
		Description: `Reads each transcript once, streaming, and reports: records by type; content
blocks by type; bytes by category (thinking, tool results, toolUseResult
copies, tool_use inputs, images, progress records, file-history snapshots,
the rest); the largest tool outputs; the parent tree and the active chain
that resume walks; structural findings; compact boundaries; the context
the session would resume with, from the last recorded usage and a cl100k
estimate over the messages after the last boundary; and the context of every
request as a sparkline as wide as the terminal (plain ASCII with --ascii or
when the locale is not UTF-8).

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.IntFlag{Name: "top", Value: 10, Usage: "list this many of the largest tool outputs"},
			&cli.BoolFlag{Name: "no-tokens", Usage: "skip the cl100k estimate"},
			&cli.BoolFlag{Name: "ascii", Usage: "draw the context sparkline in plain ASCII"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			return runAnalyze(ctx, analyzeOptions{
				globalOptions: globals(cmd),
				Select:        sel,
				Top:           cmd.Int("top"),
				NoTokens:      cmd.Bool("no-tokens"),
				ASCII:         cmd.Bool("ascii"),
			})
		},
	}
}

// analyzeReport is the JSON form of one file's analysis.
type analyzeReport struct {
	Path string `json:"path"`
	*transcript.Analysis
	Structure transcript.Structure `json:"structure"`
	Estimate  *transcript.Estimate `json:"context_estimate,omitempty"`
	// Contexts is the context of every request of the main conversation
	// (its recorded usage), in file order.
	Contexts []int64 `json:"context_per_request"`
}

// runAnalyze analyzes every selected transcript.
func runAnalyze(ctx context.Context, o analyzeOptions) error {
	if o.Top < 0 {
		return usagef("--top must be 0 or more")
	}
	files, err := resolveInputs(ctx, o.globalOptions, o.Select)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		sayNoSessions(o.globalOptions, o.Select)
	}
	if !o.NoTokens {
		// Initialise the tokenizer on the other core while the file is read.
		go tokens.Warm()
		boundMemory(analyzeMemoryLimit)
	} else {
		boundMemory(readMemoryLimit)
	}
	reports := []analyzeReport{}
	for _, in := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := analyzeFile(in.Path, o)
		if err != nil {
			return err
		}
		if o.JSON {
			reports = append(reports, r)
			continue
		}
		printAnalysis(o.Stdout, r, sparkStyle(o.Stdout, o.ASCII))
	}
	if o.JSON {
		return writeJSON(o.Stdout, reports)
	}
	return nil
}

func analyzeFile(path string, o analyzeOptions) (analyzeReport, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return analyzeReport{}, fileError(path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return analyzeReport{}, fileError(path, err)
	} else if fi.IsDir() {
		return analyzeReport{}, fmt.Errorf("%s: is a directory (pass a transcript file)", path)
	} else if fi.Size() == 0 {
		return analyzeReport{}, fmt.Errorf("%s: %w", path, errEmptyFile)
	}
	ix, a, err := transcript.Analyze(f, transcript.AnalyzeOptions{Top: o.Top})
	if err != nil {
		return analyzeReport{}, fileError(path, err)
	}
	c := ix.ActiveChain()
	msgs := ix.Messages(c)
	if u, ok := ix.ChainUsage(c); ok {
		a.LastUsage = &u
	}
	r := analyzeReport{Path: path, Analysis: a, Structure: ix.Structural(c, msgs), Contexts: report.Contexts(ix, transcript.IsSubagentPath(path))}
	if r.Contexts == nil {
		r.Contexts = []int64{}
	}
	if !o.NoTokens && len(msgs) > 0 {
		est, err := ix.EstimateContext(f, c, msgs)
		if err != nil {
			return r, fileError(path, err)
		}
		r.Estimate = &est
	}
	return r, nil
}

func printAnalysis(w io.Writer, r analyzeReport, sp spark) {
	a := r.Analysis
	fmt.Fprintf(w, "%s\n  %s in %s lines\n", r.Path, ui.Bytes(a.Bytes), ui.Count(a.Lines))

	fmt.Fprintf(w, "\nrecords by type\n")
	printStats(w, a.Records, a.Bytes)
	if len(a.Subtypes) > 0 {
		fmt.Fprintf(w, "\nsubtypes\n")
		printStats(w, a.Subtypes, a.Bytes)
	}
	if len(a.Blocks) > 0 {
		fmt.Fprintf(w, "\ncontent blocks by type\n")
		printStats(w, a.Blocks, a.Bytes)
	}

	c := a.Categories
	fmt.Fprintf(w, "\nbytes by category\n")
	for _, row := range []struct {
		name string
		n    int64
	}{
		{"thinking (with signatures)", c.Thinking},
		{"tool_result content", c.ToolResult},
		{"toolUseResult copies", c.ToolUseResult},
		{"tool_use inputs", c.ToolUseInput},
		{"images", c.Image},
		{"progress records", c.Progress},
		{"file-history-snapshots", c.FileHistory},
		{"the rest", c.Rest},
	} {
		fmt.Fprintf(w, "  %-28s %10s  %6s\n", row.name, ui.Bytes(row.n), ui.Percent(row.n, a.Bytes))
	}

	if len(a.Largest) > 0 {
		fmt.Fprintf(w, "\nlargest tool outputs\n")
		for _, o := range a.Largest {
			tool := o.Tool
			if tool == "" {
				tool = "(unknown tool)"
			}
			errMark := ""
			if o.IsError {
				errMark = "  (error)"
			}
			fmt.Fprintf(w, "  line %-7d %-16s %10s%s\n", o.Line, tool, ui.Bytes(int64(o.Bytes)), errMark)
		}
	}

	s := r.Structure
	fmt.Fprintf(w, "\ntree\n  %d roots, %d leaves, %d forks\n", a.Shape.Roots, a.Shape.Leaves, a.Shape.Forks)
	if s.Chain.Records == 0 {
		fmt.Fprintf(w, "  no conversation: nothing to resume\n")
	} else {
		side := ""
		if s.Chain.Sidechain {
			side = " (a subagent's sidechain)"
		}
		fmt.Fprintf(w, "  active chain%s: %s records, %s API messages, walked from line %d", side, ui.Count(s.Chain.Records), ui.Count(s.Chain.Messages), s.Chain.StartLine)
		switch {
		case s.Chain.Boundary > 0:
			fmt.Fprintf(w, " back to the compact boundary at line %d", s.Chain.Boundary)
		case s.Chain.BrokenAt > 0:
			fmt.Fprintf(w, " back to line %d, whose parent is missing", s.Chain.BrokenAt)
		}
		fmt.Fprintln(w)
		if s.Chain.Attached > 0 {
			fmt.Fprintf(w, "  %d parallel tool results hang off the chain and are attached by tool id\n", s.Chain.Attached)
		}
	}
	if len(a.Boundaries) > 0 {
		fmt.Fprintf(w, "\ncompact boundaries\n")
		for _, b := range a.Boundaries {
			fmt.Fprintf(w, "  line %d", b.Line)
			if b.Trigger != "" {
				fmt.Fprintf(w, " (%s", b.Trigger)
				if b.PreTokens > 0 {
					fmt.Fprintf(w, ", %s tokens before", ui.Count(b.PreTokens))
				}
				fmt.Fprint(w, ")")
			}
			fmt.Fprintln(w)
		}
	}

	fmt.Fprintf(w, "\nfindings\n")
	n := 0
	for _, row := range []struct {
		what string
		l    transcript.Lines
	}{
		{"parentUuid names a record not in the file", s.DanglingParents},
		{"duplicate uuids", s.DuplicateUUIDs},
		{"orphan tool_use (no result in the next message)", s.OrphanToolUse},
		{"tool_use at the end without a result (in flight?)", s.ToolUseInFlight},
		{"orphan tool_result (no tool_use in the previous message)", s.OrphanToolResult},
		{"empty content", s.EmptyContent},
		{"empty text blocks", s.EmptyText},
		{"whitespace-only text blocks (dropped by the client)", s.BlankText},
		{"torn lines", s.TornLines},
		{"invalid lines", s.InvalidLines},
		{"NUL padding", s.NULLines},
		{"user/assistant records before the boundary (not resent)", s.OffChainBefore},
		{"user/assistant records on other branches (rewinds)", s.OffChainBranches},
		{"sidechain records in this file (never resent)", s.OffChainSide},
	} {
		if row.l.Count == 0 {
			continue
		}
		n++
		fmt.Fprintf(w, "  %-58s %5d  lines %s\n", row.what, row.l.Count, lineList(row.l.Lines, row.l.Count))
	}
	if n == 0 {
		fmt.Fprintf(w, "  none\n")
	}

	fmt.Fprintf(w, "\nresume context\n")
	if a.LastUsage != nil {
		u := a.LastUsage
		fmt.Fprintf(w, "  last recorded usage: %s tokens (input %s + cache read %s + cache creation %s + output %s)\n",
			ui.Count(u.Total()), ui.Count(u.Input), ui.Count(u.CacheRead), ui.Count(u.CacheCreation), ui.Count(u.Output))
	} else {
		fmt.Fprintf(w, "  last recorded usage: none on the active chain\n")
	}
	if e := r.Estimate; e != nil {
		how := "exact count"
		if e.Sampled {
			how = "sampled and scaled"
		}
		fmt.Fprintf(w, "  cl100k estimate: %s tokens over %s of text", ui.Count(e.Tokens), ui.Bytes(e.Bytes))
		if e.Images > 0 {
			fmt.Fprintf(w, " and %d images", e.Images)
		}
		fmt.Fprintf(w, " (%s; Claude's tokenizer differs)\n", how)
	}
	printGrowth(w, r.Contexts, sp)
	fmt.Fprintln(w)
}

func printStats(w io.Writer, m map[string]transcript.Stat, total int64) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]].Bytes != m[names[j]].Bytes {
			return m[names[i]].Bytes > m[names[j]].Bytes
		}
		return names[i] < names[j]
	})
	for _, k := range names {
		st := m[k]
		fmt.Fprintf(w, "  %-36s %7d %10s  %6s\n", k, st.Count, ui.Bytes(st.Bytes), ui.Percent(st.Bytes, total))
	}
}
