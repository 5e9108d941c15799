package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/hooklib/memory"
)

// memoryOptions are the inputs of ccm memory list and clear.
type memoryOptions struct {
	globalOptions
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
				Usage: "print the lessons, oldest first (--json: one object per line)",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return runMemoryList(ctx, memoryOptions{globals(cmd)})
				},
			},
			{
				Name:  "clear",
				Usage: "remove every lesson",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return runMemoryClear(ctx, memoryOptions{globals(cmd)})
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
		enc := json.NewEncoder(o.Stdout)
		for _, e := range all {
			e.Hash = e.Key()
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintf(o.Stdout, "no lessons in %s\n", m.Path)
		return nil
	}
	for _, e := range all {
		proj := e.Project
		if proj == "" {
			proj = "(any project)"
		}
		fmt.Fprintf(o.Stdout, "%s  %s\n", e.Line(), proj)
	}
	return nil
}

func runMemoryClear(ctx context.Context, o memoryOptions) error {
	m := memoryStore(o)
	n, err := m.Clear(ctx)
	if err != nil {
		return fmt.Errorf("tool memory %s: %w", m.Path, err)
	}
	if o.JSON {
		return json.NewEncoder(o.Stdout).Encode(map[string]any{"cleared": n, "path": m.Path})
	}
	fmt.Fprintf(o.Stdout, "cleared %d lesson(s) from %s\n", n, m.Path)
	return nil
}
