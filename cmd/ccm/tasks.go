package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/hooklib/coldtask"
	"ccm/sessions"
)

// tasksOptions are the inputs of ccm tasks.
type tasksOptions struct {
	globalOptions
	Session string
}

func newTasksCommand() *cli.Command {
	return &cli.Command{
		Name:  "tasks",
		Usage: "list the cold-task summaries the hooks wrote",
		Description: `At PostToolUse (after Bash, Edit, Write, MultiEdit, NotebookEdit,
TaskUpdate and TodoWrite), every CHECK_FREQUENCY (10) assistant turns and
only when the context is at least CONTEXT_THRESHOLD (70) % full, the hooks
summarise each completed task (TaskCreate task or TodoWrite item) that no
turn has mentioned for TURNS_UNTIL_COLD (20) turns: files modified,
commands run, outcomes, errors resolved. Each is written once, as JSON, to
<ccm home>/compressed_context/<md5(session_id:task_id)>.json, and the
preservation block carries them at the next compaction. This lists them,
oldest first, for every session or the one given.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "only the summaries of the session with this `ID`, or the one whose id starts with it (4 characters or more)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runTasks(ctx, tasksOptions{globalOptions: globals(cmd), Session: cmd.String("session")})
		},
	}
}

func runTasks(_ context.Context, o tasksOptions) error {
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	dir := coldtask.Dir(cfg.Home)
	list, bad, err := coldtask.List(dir, "")
	if err != nil {
		return fmt.Errorf("cold-task summaries %s: %w", dir, err)
	}
	if o.Session != "" {
		// A session id by prefix, among the sessions that have summaries.
		id, err := sessions.CheckID(o.Session)
		if err != nil {
			return usagef("%v", err)
		}
		var ids []sessions.Match
		seen := map[string]bool{}
		for _, s := range list {
			if !seen[s.SessionID] {
				seen[s.SessionID] = true
				ids = append(ids, sessions.Match{ID: s.SessionID})
			}
		}
		m, ok, err := sessions.MatchID(id, ids)
		if err != nil {
			return usagef("%v", err)
		}
		keep := list[:0]
		for _, s := range list {
			if ok && s.SessionID == m.ID {
				keep = append(keep, s)
			}
		}
		list = keep
	}
	for _, p := range bad {
		fmt.Fprintf(o.Stderr, "ccm: %s: not a cold-task summary; skipped\n", p)
	}
	if o.JSON {
		if list == nil {
			list = []coldtask.Summary{}
		}
		return writeJSON(o.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(o.Stdout, "no cold-task summaries in %s\n", dir)
		return nil
	}
	session := ""
	for _, s := range list {
		if s.SessionID != session {
			session = s.SessionID
			fmt.Fprintf(o.Stdout, "session %s\n", session)
		}
		fmt.Fprintf(o.Stdout, "  task %s, turns %d-%d, summarised %s\n", s.TaskID, s.StartTurn, s.EndTurn, s.CompressedAt)
		fmt.Fprintln(o.Stdout, "  "+strings.ReplaceAll(coldtask.Render(s), "\n", "\n  "))
	}
	return nil
}
