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
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runRefresh(ctx, refreshOptions{globalOptions: globals(cmd), Sessions: cmd.StringSlice("session")})
		},
	}
}

func runRefresh(ctx context.Context, o refreshOptions) error {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	marked, err := hooklib.MarkRefresh(ctx, hooklib.NewStore(cfg.Home), o.Sessions, o.Now)
	if err != nil {
		return fmt.Errorf("mark sessions: %w", err)
	}
	if len(o.Sessions) > 0 && len(marked) < len(o.Sessions) {
		return fmt.Errorf("marked %d of %d sessions; the others have no state (ended or never seen)", len(marked), len(o.Sessions))
	}
	fmt.Fprintf(o.Stdout, "marked %d session(s) for a refresh on their next prompt\n", len(marked))
	return nil
}
