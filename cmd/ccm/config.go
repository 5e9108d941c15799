package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
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
		Description: `Prints every variable ccm's hooks read as NAME=value, followed by its source:
env (the process environment), config.env (<ccm home>/config.env) or
default. The environment wins over config.env, which wins over the default.
Invalid values are listed as warnings; the hooks use the default instead.
The output is itself a valid config.env.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runConfig(ctx, configOptions{globalOptions: globals(cmd)})
		},
	}
}

type configEntry struct {
	Name   string `json:"name"`
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
	var entries []configEntry
	for _, v := range hooklib.Vars {
		val := cfg.Lookup(v.Name)
		entries = append(entries, configEntry{v.Name, val.Value, val.Source, v.Help})
	}
	if o.JSON {
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"config_file": cfg.File, "variables": entries, "warnings": cfg.Warnings})
	}
	fmt.Fprintf(o.Stdout, "# ccm hooks: environment > %s > default\n", cfg.File)
	tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
	for _, e := range entries {
		fmt.Fprintf(tw, "%s=%s\t# %s\n", e.Name, quoteEnv(e.Value), e.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(o.Stdout, "# warning: %s\n", w)
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
