package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
)

// refreshOptions are the inputs of ccm refresh.
type refreshOptions struct {
	globalOptions
	Sessions []string
	DryRun   bool
	Verbose  bool
	Now      time.Time
}

func newRefreshCommand() *cli.Command {
	return &cli.Command{
		Name:  "refresh",
		Usage: "re-inject rules and CLAUDE.md on the next prompt of running sessions",
		Description: `Marks live sessions (state updated in the last 7 days and not ended) so that
their next prompt gets the rules and CLAUDE.md (including CLAUDE.local.md)
whatever the prompt counter says, once. Use it after editing rules. A mark
expires after a day.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "session", Usage: "mark only this session (repeatable)"},
			dryRunFlag(""),
			verboseFlag("the sessions marked"),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("refresh takes no arguments (see ccm refresh --help)")
			}
			return runRefresh(ctx, refreshOptions{globalOptions: globals(cmd), Sessions: cmd.StringSlice("session"),
				DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose")})
		},
	}
}

func runRefresh(ctx context.Context, o refreshOptions) error {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	st := hooklib.NewStore(cfg.Home)
	mark := hooklib.MarkRefresh
	verb := "marked"
	if o.DryRun {
		mark = func(_ context.Context, s *hooklib.Store, ids []string, now time.Time) ([]string, error) {
			return hooklib.RefreshTargets(s, ids, now)
		}
		verb = "would mark"
	}
	marked, err := mark(ctx, st, o.Sessions, o.Now)
	if err != nil {
		return fmt.Errorf("mark sessions: %w", err)
	}
	if len(o.Sessions) > 0 && len(marked) < len(o.Sessions) {
		return fmt.Errorf("%s %d of %d sessions; the others have no state (ended or never seen)", verb, len(marked), len(o.Sessions))
	}
	if marked == nil {
		marked = []string{}
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"dry_run": o.DryRun, "sessions": marked})
	}
	fmt.Fprintf(o.Stdout, "%s %d %s for a refresh on their next prompt\n", verb, len(marked), plural(len(marked), "session"))
	if o.Verbose {
		for _, id := range marked {
			fmt.Fprintf(o.Stdout, "  %s\n", id)
		}
	}
	return nil
}
