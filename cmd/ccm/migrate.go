package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"ccm/hooklib"
	"ccm/hooklib/install"
	"ccm/hooklib/migrate"
	"ccm/internal/ui"
)

// migrateOptions are the inputs of ccm migrate.
type migrateOptions struct {
	globalOptions
	DryRun, Yes, Undo bool
	Verbose           bool   // every file the plan writes, after the findings
	ProjectDir        string // "" for the working directory
	Lookup            func(string) (string, bool)
	Exe               string // the ccm the hooks run; "" for this binary
	Now               time.Time
}

func newMigrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "move from claude-context-manager, agentihooks and claude-agentic-framework to ccm",
		Description: `Finds the earlier tools' installations: their hook registrations in the user,
project and local settings files, their hook scripts, <claude dir>/hooks/config.py,
~/.agentihooks/.env, the CCM store, the tool memory NDJSON, the compressed-
context summaries, the compact instructions. It prints a plan, one line per
finding: take over (their hooks are replaced by ccm's, through ccm install),
import (their settings into <ccm home>/config.env, the tool memory and the
summaries into ccm's), use in place (the old CCM store is ccm's) or leave
(with why: a settings file with comments, trailing commas or a BOM, a line of
config.py that is code, a script that no longer exists...).

It changes nothing without --yes (or a y on a terminal). Every file it
changes is copied first to <ccm home>/backups/migrate-<stamp>/, and
ccm migrate --undo puts them back byte for byte (and removes the files it
created). A second run finds nothing left to do.

A migration is journaled: killed at any point, it leaves a journal from
which the next run finishes the job. ccm migrate --yes puts back what the
cut-short run changed and migrates again; ccm migrate --undo puts it back
and stops there (an undo cut short is finished the same way).

` + exitStatusHelp,
		Flags: []cli.Flag{
			dryRunFlag("its findings, a line each"),
			verboseFlag("the plan in full: each handler replaced, each line and file imported"),
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "apply the plan without asking"},
			&cli.BoolFlag{Name: "undo", Usage: "put back what the latest migration changed"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runMigrate(ctx, migrateOptions{globalOptions: globals(cmd), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Yes: cmd.Bool("yes"), Undo: cmd.Bool("undo")})
		},
	}
}

func runMigrate(ctx context.Context, o migrateOptions) error {
	if o.Lookup == nil {
		o.Lookup = os.LookupEnv
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	wd := o.ProjectDir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return err
		}
	}
	home, _ := o.Lookup("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	cfg := hooklib.LoadConfig(o.ClaudeDir, o.Lookup)
	mo := migrate.Options{ClaudeDir: o.ClaudeDir, ProjectDir: wd, Home: cfg.Home, UserHome: home, Lookup: o.Lookup}
	// Whatever changes files holds the migration lock.
	if !o.DryRun && (o.Yes || o.Undo) {
		unlock, err := migrate.Lock(ctx, mo.Home)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if o.Undo {
		return runMigrateUndo(o, mo)
	}
	if j := migrate.Interrupted(mo.Home); j != "" {
		if o.DryRun || !o.Yes {
			fmt.Fprintf(o.Stdout, "migrate: a migration was interrupted (%s): ccm migrate --yes puts back what it changed and migrates again; ccm migrate --undo puts it back\n", filepath.Dir(j))
			return nil
		}
		r, err := migrate.Recover(mo.Home)
		if err != nil {
			return fmt.Errorf("finish the interrupted migration of %s: %w", filepath.Dir(j), err)
		}
		if !o.JSON {
			fmt.Fprintf(o.Stdout, "migrate: put back the %d file(s) an interrupted migration had changed; migrating again\n", len(r.Restored)+len(r.Removed))
			for _, sv := range r.Saved {
				fmt.Fprintf(o.Stderr, "ccm: kept a copy of %s\n", sv)
			}
		}
	}
	plan, err := migrate.Detect(mo)
	if err != nil {
		return err
	}
	if o.JSON && (o.DryRun || !o.Yes) {
		return writeJSON(o.Stdout, map[string]any{"plan": plan.Items, "changes": plan.Changes()})
	}
	if len(plan.Items) == 0 {
		fmt.Fprintln(o.Stdout, "migrate: found nothing of claude-context-manager, agentihooks or claude-agentic-framework")
		return nil
	}
	if !o.JSON {
		t := ui.NewTable(ui.Col{}, ui.Col{}, ui.Col{Shrink: true, Min: 30})
		for _, it := range plan.Items {
			t.Add(it.Action, it.Tool, it.What)
		}
		if err := writeTable(o.globalOptions, t); err != nil {
			return err
		}
		if o.Verbose {
			printMigratePlan(o, plan)
		}
	}
	if !plan.Changes() {
		if !o.JSON {
			fmt.Fprintln(o.Stdout, "migrate: nothing to change")
		}
		return nil
	}
	if o.DryRun {
		fmt.Fprintln(o.Stdout, "(dry run: nothing was changed; ccm migrate --yes applies the plan)")
		return nil
	}
	if !o.Yes {
		// Asked on a terminal: the lock is taken after the answer.
		f, ok := o.Stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			fmt.Fprintln(o.Stdout, "nothing was changed: run ccm migrate --yes to apply the plan")
			return nil
		}
		fmt.Fprint(o.Stdout, "apply this plan? [y/N] ")
		line, _ := bufio.NewReader(o.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(o.Stdout, "nothing was changed")
			return nil
		}
		unlock, err := migrate.Lock(ctx, mo.Home)
		if err != nil {
			return err
		}
		defer unlock()
	}
	libOptions := func(scope string) (install.Options, error) {
		io := installOptions{globalOptions: o.globalOptions, Scope: scope, Exe: o.Exe, Now: o.Now}
		io.Stdout, io.Stderr = discard{}, o.Stderr
		lo, err := io.libOptions()
		lo.ProjectDir = wd
		return lo, err
	}
	lo, err := libOptions(install.ScopeUser)
	if err != nil {
		return err
	}
	cmds, err := install.CommandFiles(lo)
	if err != nil {
		return err
	}
	inst := migrate.Installer{Commands: cmds, Install: func(scope string) error {
		lo, err := libOptions(scope)
		if err != nil {
			return err
		}
		_, err = install.Install(lo)
		return err
	}}
	man, err := migrate.Apply(ctx, mo, plan, inst, o.Now)
	if err != nil {
		if man != "" {
			return fmt.Errorf("migrate stopped: %v (its journal is %s)", err, man)
		}
		return fmt.Errorf("migrate: %w", err)
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"plan": plan.Items, "manifest": man})
	}
	if man == "" {
		fmt.Fprintln(o.Stdout, "migrate: nothing to change")
		return nil
	}
	fmt.Fprintf(o.Stdout, "migrated; the files as they were are in %s (ccm migrate --undo puts them back)\n", filepath.Dir(man))
	return nil
}

func runMigrateUndo(o migrateOptions, mo migrate.Options) error {
	man := migrate.Latest(mo.Home)
	if !o.DryRun {
		migrate.RemoveUnjournaled(mo.Home)
	}
	if man == "" {
		return fmt.Errorf("no migration to undo under %s", filepath.Join(mo.Home, "backups"))
	}
	r, err := migrate.Undo(man, o.DryRun)
	if err != nil {
		return err
	}
	for _, sv := range r.Saved {
		fmt.Fprintf(o.Stderr, "ccm: kept a copy of %s\n", sv)
	}
	if o.JSON {
		return writeJSON(o.Stdout, r)
	}
	verb := "restored"
	if o.DryRun {
		verb = "would restore"
	}
	for _, p := range r.Restored {
		fmt.Fprintf(o.Stdout, "%s %s\n", verb, p)
	}
	for _, p := range r.Removed {
		fmt.Fprintf(o.Stdout, "removed %s (created by the migration)\n", p)
	}
	for _, k := range r.Kept {
		fmt.Fprintf(o.Stderr, "ccm: %s\n", k)
	}
	if len(r.Kept) > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}

// printMigratePlan prints, after the findings, everything the plan
// writes: each handler replaced, each config.env line, each file imported.
func printMigratePlan(o migrateOptions, p *migrate.Plan) {
	w := o.Stdout
	for _, st := range p.Settings {
		if st.Problem != "" {
			continue
		}
		for _, h := range st.Handlers {
			fmt.Fprintf(w, "  replace     %s hook of %s in %s: %s\n", h.Event, h.Tool, shortHome(st.Path), h.Command)
		}
	}
	for _, c := range p.Config {
		fmt.Fprintf(w, "  config.env  %s\n", c)
	}
	if p.ToolMemoryFrom != "" {
		fmt.Fprintf(w, "  import      %s into %s\n", shortHome(p.ToolMemoryFrom), shortHome(p.ToolMemoryTo))
	}
	for _, f := range p.Summaries {
		fmt.Fprintf(w, "  copy        %s into %s\n", shortHome(f), shortHome(p.SummaryDir))
	}
	for _, f := range p.OldCommands {
		fmt.Fprintf(w, "  replace     %s (ccm's slash command takes its place)\n", shortHome(f))
	}
}

// discard is an io.Writer that drops everything.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
