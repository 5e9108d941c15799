package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/report"
	"ccm/transcript"
)

// globalOptions are the flags every command accepts.
type globalOptions struct {
	ClaudeDir string // Claude config dir: --claude-dir, $CLAUDE_CONFIG_DIR, ~/.claude
	CacheDir  string // CCM store root: --cache-dir, $CCM_CACHE_DIR, <claude dir>/cache/ccm
	JSON      bool   // machine-readable output
	Wide      bool   // tables print every cell whole, ids in full
	Terminal  bool   // stdout is a terminal: tables fit its width, bars are drawn
	ASCII     bool   // the terminal cannot show Unicode: tables shorten with "..."
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
}

// newApp builds the command tree. Every command is listed here explicitly;
// none registers itself.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	root := &cli.Command{
		Name:                  "ccm",
		Usage:                 "keep long Claude Code sessions healthy",
		Version:               version(),
		EnableShellCompletion: true,
		// The completion command is built at Run: give it its examples then.
		ConfigureShellCompletionCommand: func(c *cli.Command) { setExamples(c, "ccm "+c.Name) },
		Reader:                          stdin,
		Writer:                          stdout,
		ErrWriter:                       stderr,
		// Run must return errors to main, never call os.Exit behind its back.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "claude-dir", Usage: "Claude Code config directory", Sources: cli.EnvVars("CLAUDE_CONFIG_DIR"), TakesFile: true},
			&cli.StringFlag{Name: "cache-dir", Usage: "CCM store directory (default <claude-dir>/cache/ccm)", Sources: cli.EnvVars("CCM_CACHE_DIR"), TakesFile: true},
			&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"},
			&cli.BoolFlag{Name: "wide", Usage: "print tables whole: full session ids and paths, no fitting to the terminal"},
		},
		Commands: []*cli.Command{
			// transcript engine
			newAnalyzeCommand(),
			newAuditCommand(),
			newCheckCommand(),
			newPurgeCommand(),
			newRestoreCommand(),
			// store and prune
			newCacheCommand(),
			newPinCommand(),
			newUnpinCommand(),
			newPinsCommand(),
			newPruneCommand(),
			// sessions, disk usage, archives, cleaning, cron
			newReportCommand(),
			newSessionsCommand(),
			newSearchCommand(),
			newMCPCommand(),
			newDuCommand(),
			newArchiveCommand(),
			newUnarchiveCommand(),
			newExportCommand(),
			newImportCommand(),
			newCleanCommand(),
			newMaintainCommand(),
			// hooks
			newHookCommand(),
			newInstallCommand(),
			newUninstallCommand(),
			newConfigCommand(),
			newCompressCommand(),
			newRefreshCommand(),
			newCaptureCommand(),
			newMemoryCommand(),
			newMigrateCommand(),
			newTasksCommand(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q (see ccm --help)", cmd.Args().First())
			}
			return cli.ShowRootCommandHelp(cmd)
		},
	}
	setUsageErrors(root)
	for _, c := range root.Commands {
		requireConfigDir(c)
	}
	setExamples(root, root.Name)
	return root
}

// setUsageErrors makes every command report a usage error as one line
// (urfave/cli would print the whole help text and the error twice).
func setUsageErrors(cmd *cli.Command) {
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return usageError{msg: fmt.Sprintf("%v (see %s --help)", err, c.FullName())}
	}
	for _, sub := range cmd.Commands {
		setUsageErrors(sub)
	}
}

// requireConfigDir makes every command check, before it runs, that the
// Claude config dir exists: one error, exit 2, and nothing read or created
// (a typo in a cron line must not do nothing every night, unseen, nor make
// a second config dir). The help needs no config dir; the hooks check it
// themselves, silently (hooklib.Run).
func requireConfigDir(cmd *cli.Command) {
	for _, sub := range cmd.Commands {
		requireConfigDir(sub)
	}
	if cmd.Action == nil || cmd.Name == "hook" || len(cmd.Commands) > 0 {
		return
	}
	cmd.Before = func(ctx context.Context, c *cli.Command) (context.Context, error) {
		if readsOnlyNamedFiles(c) {
			return ctx, nil
		}
		return ctx, transcript.CheckConfigDir(globals(c).ClaudeDir)
	}
}

// readsOnlyNamedFiles reports whether c only reads the transcripts named
// on its command line: check, analyze, audit and report of files, and a
// dry run of purge on files. Such a run needs no config dir (a newcomer's
// first command, purge --dry-run on the shipped sample, runs on a machine
// without one) and creates nothing anywhere.
func readsOnlyNamedFiles(c *cli.Command) bool {
	if c.Args().Len() == 0 || c.Bool("all") || c.Bool("current") || c.String("session") != "" {
		return false
	}
	switch c.Name {
	case "check", "analyze", "audit", "report":
		return true
	case "purge":
		return c.Bool("dry-run")
	}
	return false
}

// globals reads the global flags from any command of the tree.
func globals(cmd *cli.Command) globalOptions {
	root := cmd.Root()
	g := globalOptions{
		ClaudeDir: transcript.ConfigDir(cmd.String("claude-dir")),
		CacheDir:  cmd.String("cache-dir"),
		JSON:      cmd.Bool("json"),
		Wide:      cmd.Bool("wide"),
		Stdin:     root.Reader,
		Stdout:    root.Writer,
		Stderr:    root.ErrWriter,
	}
	if g.Stdin == nil {
		g.Stdin = os.Stdin
	}
	g.Terminal = isTerminal(g.Stdout)
	g.ASCII = !report.UnicodeTerminal(os.Getenv)
	return g
}
