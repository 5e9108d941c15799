package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/internal/ui"
)

// configOptions are the inputs of ccm config.
type configOptions struct {
	globalOptions
	Lookup func(string) (string, bool)
}

func newConfigCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "print the hooks' effective configuration and where each value comes from",
		Description: `Prints every variable ccm reads, grouped by the feature it configures (a
comment line names the feature), as NAME=value followed by its source: env
(the process environment), config.env (<ccm home>/config.env), a file of an
earlier tool (agentihooks' ~/.agentihooks/.env and *.env, or
$AGENTIHOOKS_HOME; claude-context-manager's <claude dir>/hooks/config.py,
simple assignments only) or default. A command's flag wins over the
environment, which wins over config.env, which wins over the earlier tools'
files. Invalid values are listed as warnings (the default is used instead);
lines of config.py that are code, not a simple assignment, are named and not
read; what the earlier tools' files set that ccm does not use is named. The
output is itself a valid config.env.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runConfig(ctx, configOptions{globalOptions: globals(cmd)})
		},
	}
}

type configEntry struct {
	Name   string `json:"name"`
	Group  string `json:"group"` // the feature it configures
	Value  string `json:"value"`
	Source string `json:"source"`
	Help   string `json:"help"`
}

func runConfig(_ context.Context, o configOptions) error {
	lookup := o.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	cfg := hooklib.LoadConfig(o.ClaudeDir, lookup)
	cfg.Validate()
	groups := hooklib.Groups()
	entries := []configEntry{}
	for _, g := range groups {
		for _, v := range g.Vars {
			val := cfg.Lookup(v.Name)
			entries = append(entries, configEntry{v.Name, g.Feature, val.Value, val.Source, v.Help})
		}
	}
	if o.JSON {
		legacy := []map[string]any{}
		for _, f := range cfg.Legacy {
			legacy = append(legacy, map[string]any{"path": f.Path, "tool": f.Tool, "unreadable": f.Unreadable})
		}
		return writeJSON(o.Stdout, map[string]any{"config_file": cfg.File, "variables": entries, "warnings": cfg.Warnings,
			"earlier_tools_files": legacy, "not_used": cfg.Unused})
	}
	fmt.Fprintf(o.Stdout, "# ccm: flag > environment > %s > the earlier tools' files > default\n", cfg.File)
	for _, f := range cfg.Legacy {
		fmt.Fprintf(o.Stdout, "# read %s (%s)\n", f.Label, f.Tool)
		for _, u := range f.Unreadable {
			fmt.Fprintf(o.Stdout, "# not read, %s %s\n", f.Label, u)
		}
	}
	for _, g := range groups {
		fmt.Fprintf(o.Stdout, "\n# %s: %s\n", g.Feature, g.About)
		t := ui.NewTable(ui.Col{}, ui.Col{})
		for _, v := range g.Vars {
			val := cfg.Lookup(v.Name)
			t.Add(v.Name+"="+quoteEnv(val.Value), "# "+val.Source)
		}
		if err := t.Write(o.Stdout, 0); err != nil {
			return err
		}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(o.Stdout, "# warning: %s\n", w)
	}
	for _, u := range cfg.Unused {
		fmt.Fprintf(o.Stdout, "# not used by ccm: %s\n", u)
	}
	return nil
}

// quoteEnv quotes a value for config.env when it holds spaces or #.
func quoteEnv(s string) string {
	for _, r := range s {
		if r == ' ' || r == '#' || r == '\t' || r == '"' || r == '\'' {
			return "'" + s + "'"
		}
	}
	return s
}
