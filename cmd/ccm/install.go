package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/hooklib/commands"
	"ccm/hooklib/install"
)

// installOptions are the inputs of ccm install and ccm uninstall.
type installOptions struct {
	globalOptions
	Scope   string
	DryRun  bool
	Verbose bool   // the resulting settings file after the changes
	Exe     string // the ccm the hooks run; "" for this binary
	Now     time.Time
	// Features are the optional hooks left out (--no-capture, ...).
	Features install.Features
	// Autocompact, when > 0, is set as CLAUDE_AUTOCOMPACT_PCT_OVERRIDE.
	Autocompact int
}

func installFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scope", Value: "user", Usage: "user (~/.claude/settings.json), project (.claude/settings.json) or local (.claude/settings.local.json)",
			Validator: func(s string) error {
				if s != install.ScopeUser && s != install.ScopeProject && s != install.ScopeLocal {
					return fmt.Errorf("unknown scope %q (want user, project or local)", s)
				}
				return nil
			}},
		dryRunFlag("the changes to settings.json and the slash commands"),
		verboseFlag("the resulting settings.json after the changes"),
		&cli.StringFlag{Name: "ccm", Usage: "path of the ccm binary the hooks run (default: this binary)", TakesFile: true},
	}
}

func featureFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "no-capture", Usage: "leave out the PostToolUse capture of large tool outputs"},
		&cli.BoolFlag{Name: "no-memory", Usage: "leave out the tool memory (lessons of failed tool calls)"},
		&cli.BoolFlag{Name: "no-monitor", Usage: "leave out the context monitor and audit (Stop)"},
		&cli.BoolFlag{Name: "no-preserve", Usage: "leave out the pre-compact preservation (PreCompact)"},
		&cli.BoolFlag{Name: "no-cold-tasks", Usage: "leave out the cold-task summaries (PostToolUse)"},
		&cli.StringFlag{Name: "autocompact", Usage: "set CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=`PCT` (1-100) in the settings' env"},
	}
}

func newInstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "register ccm's hooks in settings.json and install its slash commands",
		Description: `Adds ccm's hook registrations to the scope's settings.json, editing the file in
place: every other key and your own hooks keep their bytes, the file is
backed up to <ccm home>/backups first, and a second run changes nothing.

  SessionStart        startup|clear|compact         effort policy; after a
                                                    compaction, the preserved state
  UserPromptSubmit                                  refresh, pin directives, the
                                                    context warning for the model
  PreToolUse          Agent|Task and, with the tool memory, the tools that
                      can fail (Bash, Read, Write, Edit, Glob, Grep, Web*, mcp__*)
  PostToolUse         ^(Bash|Glob|Grep|Read|WebFetch|Edit|Write|MultiEdit|
                      NotebookEdit|TaskUpdate|TodoWrite|mcp__.*)$
                      capture; MCP error results; cold-task summaries
  PostToolUseFailure                                tool memory
  Stop                                              tool memory (MCP errors);
                                                    context monitor and audit
  PreCompact                                        saves the working state
  SessionEnd                                        removes the session's state

Each runs "ccm hook EVENT", one handler per event. --no-capture,
--no-memory, --no-monitor (context monitor and audit), --no-preserve
(pre-compact preservation) and --no-cold-tasks leave those features out,
narrow the matchers, and remove handlers an earlier install added that no
feature left needs.

--autocompact PCT sets CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=PCT in the settings'
env (the fill at which Claude Code compacts on its own; it can only lower
the client's default); uninstall removes it again, or restores the value
you had before.

It also writes the slash commands /ccm, /purge, /pin-last, /pin-next,
/pin-start and /pin-end to the scope's commands folder, keeping files of the
same name that are not ccm's. --scope project (a file the team shares) runs
"ccm" from PATH, or "$CLAUDE_PROJECT_DIR/..." for a binary inside the
project, never this machine's absolute path; --scope local writes only
.claude/settings.local.json and no slash commands (Claude Code has no
unshared commands folder in a project). A settings file that is not valid JSON, or is
read-only, is refused. ccm uninstall removes exactly what install added.

` + exitStatusHelp,
		Flags: append(installFlags(), featureFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o := installOptionsFrom(cmd)
			if s := cmd.String("autocompact"); s != "" {
				n, err := install.ParsePct(s)
				if err != nil {
					return usageError{msg: err.Error()}
				}
				o.Autocompact = n
			}
			return runInstall(ctx, o)
		},
	}
}

func installOptionsFrom(cmd *cli.Command) installOptions {
	return installOptions{globalOptions: globals(cmd), Scope: cmd.String("scope"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Exe: cmd.String("ccm"),
		Features: install.Features{NoCapture: cmd.Bool("no-capture"), NoMemory: cmd.Bool("no-memory"),
			NoMonitor: cmd.Bool("no-monitor"), NoPreserve: cmd.Bool("no-preserve"), NoColdTasks: cmd.Bool("no-cold-tasks")}}
}

// libOptions resolves paths for the install package.
func (o installOptions) libOptions() (install.Options, error) {
	exe := o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return install.Options{}, fmt.Errorf("find the ccm binary: %w", err)
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	wd, err := os.Getwd()
	if err != nil {
		return install.Options{}, err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	if o.Scope == install.ScopeProject && o.Exe == "" {
		// The project's settings are shared: this machine's absolute path
		// means nothing on a teammate's.
		exe = sharedCommand(exe, wd, o.Stderr)
	}
	// Claude Code runs hook commands with bash, Git Bash on Windows, to
	// which C:\Users\me\ccm.exe is no path (a word without a slash is
	// looked up on PATH) and C:/Users/me/ccm.exe is.
	exe = filepath.ToSlash(exe)
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	return install.Options{Scope: o.Scope, DryRun: o.DryRun, ClaudeDir: o.ClaudeDir, ProjectDir: wd,
		Home: cfg.Home, Exe: exe, Commands: commands.FS, Now: now, Features: o.Features, AutocompactPct: o.Autocompact}, nil
}

func runInstall(_ context.Context, o installOptions) error {
	lo, err := o.libOptions()
	if err != nil {
		return err
	}
	r, err := install.Install(lo)
	if err != nil {
		return err
	}
	return reportInstall(o, r, "ccm is already installed in "+r.Settings)
}

// reportInstall prints what changed, or with -n what would, a change a
// line; -v adds the settings file that results (--json carries it too).
func reportInstall(o installOptions, r install.Result, nothing string) error {
	if o.JSON {
		out := map[string]any{"settings": r.Settings, "dry_run": o.DryRun, "changed": r.Changed, "backup": r.Backup,
			"changes": r.Changes, "notes": r.Notes}
		if json.Valid(r.Content) {
			out["content"] = json.RawMessage(r.Content)
		}
		return writeJSON(o.Stdout, out)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(o.Stderr, "ccm: note: %s\n", n)
	}
	switch {
	case len(r.Changes) == 0:
		fmt.Fprintln(o.Stdout, nothing)
	case o.DryRun:
		for _, c := range r.Changes {
			fmt.Fprintf(o.Stdout, "would %s\n", c)
		}
		fmt.Fprintln(o.Stdout, "(dry run: nothing was written; -v prints the resulting settings)")
	default:
		if r.Backup != "" {
			fmt.Fprintf(o.Stdout, "backed up %s to %s\n", r.Settings, r.Backup)
		}
		for _, c := range r.Changes {
			fmt.Fprintln(o.Stdout, c)
		}
		if r.Changed {
			fmt.Fprintf(o.Stdout, "updated %s\n", r.Settings)
		}
	}
	if o.Verbose {
		fmt.Fprintf(o.Stdout, "%s:\n", r.Settings)
		_, err := o.Stdout.Write(r.Content)
		return err
	}
	return nil
}

// sharedCommand is how hooks in a team-shared settings file call ccm: a
// binary inside the project as "$CLAUDE_PROJECT_DIR/<path>" (Claude Code
// sets it for hooks), anything else as "ccm" from PATH, with a warning on
// w when this machine has no ccm on PATH.
func sharedCommand(exe, project string, w io.Writer) string {
	if real, err := filepath.EvalSymlinks(project); err == nil {
		project = real
	}
	if rel, err := filepath.Rel(project, exe); err == nil && filepath.IsLocal(rel) && !strings.ContainsAny(filepath.ToSlash(rel), "\"$`\\\n") {
		return `"$CLAUDE_PROJECT_DIR/` + filepath.ToSlash(rel) + `"`
	}
	if _, err := exec.LookPath("ccm"); err != nil {
		fmt.Fprintf(w, "ccm: warning: ccm is not on PATH: the hooks of --scope project run \"ccm hook ...\" and fail until it is (go install ./cmd/ccm, or --ccm PATH)\n")
	}
	return "ccm"
}
