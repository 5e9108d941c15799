package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
)

// hookOptions are the inputs of ccm hook.
type hookOptions struct {
	globalOptions
	Event string
}

func newHookCommand() *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "run ccm's Claude Code hook for an event (registered by ccm install)",
		ArgsUsage: "[EVENT]",
		Description: `Reads the event's JSON from stdin and answers the way Claude Code accepts for
that event. The event comes from hook_event_name on stdin, else from EVENT.

  SessionStart        effort policy (not on resume or fork), sweeps idle state;
                      after a compaction (source compact), the working state
                      saved at PreCompact
  UserPromptSubmit    counts prompts; re-injects rules and CLAUDE.md when due;
                      applies ccm:pin directives to captures; the context
                      monitor's warning for the model
  PreToolUse          Agent/Task on opus under a low or medium profile: a note;
                      the tool memory's lessons for the tool about to run
  PostToolUse         a large Bash, Read, Glob, Grep or MCP output goes into the CCM
                      store; the model gets a preview and the stub, in the
                      tool's own shape (updatedToolOutput); MCP error results
                      become lessons; after Bash, Edit, Write, MultiEdit,
                      NotebookEdit, TaskUpdate and TodoWrite, summaries of
                      cold tasks (ccm tasks)
  PostToolUseFailure  the failed call becomes a lesson
  Stop                failed MCP calls of the turn, from the transcript; the
                      context fill from the transcript's end: a systemMessage
                      at each threshold crossed, with the audit (ccm audit)
  PreCompact          saves the working state (tasks, files, tests, errors,
                      decisions, git diff, cold tasks) for after compaction
  SessionEnd          removes the session's state

A hook never breaks the session: bad, endless or never-closed input, unknown
events and tools, a store that cannot take an output (the model then gets
the original) and internal errors exit 0 with no output (or a valid
pass-through) and a line in <ccm home>/logs/hooks.log.
CCM_HOOKS_DISABLED=1 or CLAUDE_HOOKS_PASSTHROUGH=1 make it a no-op.
See ccm config for every setting.

EXIT STATUS:
   0    always`,
		// Flags are not parsed: a stray argument must never turn into a
		// usage error, whose exit status 2 would block the user's prompt.
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if a := cmd.Args().First(); a == "-h" || a == "--help" {
				return cli.ShowSubcommandHelp(cmd)
			}
			return runHook(ctx, hookOptions{globalOptions: globals(cmd), Event: cmd.Args().First()})
		},
	}
}

// runHook runs one hook; it never returns an error.
func runHook(ctx context.Context, o hookOptions) error {
	hooklib.Run(ctx, hooklib.Options{Event: o.Event, ClaudeDir: o.ClaudeDir, Stdin: o.Stdin, Stdout: o.Stdout})
	return nil
}

// hookFastPath reports whether args are exactly `ccm hook [EVENT]`, the form
// ccm install registers, and the event named. Anything else (global flags,
// --help, extra arguments) takes the full command tree.
func hookFastPath(args []string) (event string, ok bool) {
	if len(args) < 2 || len(args) > 3 || args[1] != "hook" {
		return "", false
	}
	if len(args) == 3 {
		event = args[2]
		if strings.HasPrefix(event, "-") {
			return "", false
		}
	}
	return event, true
}
