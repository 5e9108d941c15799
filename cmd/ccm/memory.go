package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/hooklib/memory"
)

// memoryOptions are the inputs of ccm memory list and clear.
type memoryOptions struct {
	globalOptions
	DryRun  bool // clear: say how many, remove none
	Verbose bool // clear: list the lessons removed
}

func newMemoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "list or clear the tool memory (lessons of failed tool calls)",
		Description: `The hooks record failed tool calls (PostToolUseFailure, an MCP tool's error
result, and at Stop the MCP errors of the turn found in the transcript) and
show the lessons of a tool in a project before the tool runs again, each at
most once per session. The store is AGENTICORE_TOOL_MEMORY_PATH
(default <ccm home>/tool-memory.ndjson), at most AGENTICORE_TOOL_MEMORY_MAX
entries.

` + exitStatusHelp,
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "print the lessons, oldest first",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return usagef("list takes no arguments")
					}
					return runMemoryList(ctx, memoryOptions{globalOptions: globals(cmd)})
				},
			},
			{
				Name:  "clear",
				Usage: "remove every lesson",
				Flags: []cli.Flag{dryRunFlag(""), verboseFlag("the lessons removed")},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return usagef("clear takes no arguments")
					}
					return runMemoryClear(ctx, memoryOptions{globals(cmd), cmd.Bool("dry-run"), cmd.Bool("verbose")})
				},
			},
		},
	}
}

func memoryStore(o memoryOptions) *memory.Store {
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	return &memory.Store{Path: cfg.Path("AGENTICORE_TOOL_MEMORY_PATH"), Max: cfg.Int("AGENTICORE_TOOL_MEMORY_MAX")}
}

func runMemoryList(_ context.Context, o memoryOptions) error {
	m := memoryStore(o)
	all, err := m.List()
	if err != nil {
		return fmt.Errorf("tool memory %s: %w", m.Path, err)
	}
	if o.JSON {
		return writeJSON(o.Stdout, lessonsJSON(all))
	}
	if len(all) == 0 {
		fmt.Fprintf(o.Stdout, "no lessons in %s\n", m.Path)
		return nil
	}
	printLessons(o.Stdout, all)
	return nil
}

// lessonsJSON is the lessons as --json lists them, [] when there is none.
func lessonsJSON(all []memory.Entry) []memory.Entry {
	out := make([]memory.Entry, len(all))
	for i, e := range all {
		e.Hash = e.Key()
		out[i] = e
	}
	return out
}

func printLessons(w io.Writer, all []memory.Entry) {
	for _, e := range all {
		proj := e.Project
		if proj == "" {
			proj = "(any project)"
		}
		fmt.Fprintf(w, "%s  %s\n", e.Line(), proj)
	}
}

func runMemoryClear(ctx context.Context, o memoryOptions) error {
	m := memoryStore(o)
	var all []memory.Entry
	if o.DryRun || o.Verbose {
		var err error
		if all, err = m.List(); err != nil {
			return fmt.Errorf("tool memory %s: %w", m.Path, err)
		}
	}
	n, verb := len(all), "would clear"
	if !o.DryRun {
		var err error
		if n, err = m.Clear(ctx); err != nil {
			return fmt.Errorf("tool memory %s: %w", m.Path, err)
		}
		verb = "cleared"
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"dry_run": o.DryRun, "cleared": n, "path": m.Path})
	}
	fmt.Fprintf(o.Stdout, "%s %d %s from %s\n", verb, n, plural(n, "lesson"), m.Path)
	if o.Verbose {
		printLessons(o.Stdout, all)
	}
	return nil
}
