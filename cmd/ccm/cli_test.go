package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// changing lists every command that changes anything: files, the store,
// settings, state. Each takes -n/--dry-run and -v/--verbose (docs/cli.md).
var changing = []string{
	"ccm purge", "ccm restore", "ccm archive", "ccm unarchive", "ccm export", "ccm import", "ccm clean", "ccm maintain", "ccm prune",
	"ccm install", "ccm uninstall", "ccm migrate", "ccm refresh", "ccm pin", "ccm unpin",
	"ccm cache put", "ccm memory clear",
}

// leafCommand is a command that runs something (not a group of
// subcommands), with its full name.
type leafCommand struct {
	name string
	cmd  *cli.Command
}

// leaves lists the tree's leaf commands.
func leaves(cmd *cli.Command, prefix string, out *[]leafCommand) {
	for _, c := range cmd.Commands {
		name := prefix + " " + c.Name
		if len(c.Commands) > 0 {
			leaves(c, name, out)
			continue
		}
		*out = append(*out, leafCommand{name, c})
	}
}

// boolFlag finds a bool flag by name, with its aliases.
func boolFlag(c *cli.Command, name string) (aliases []string, ok bool) {
	for _, f := range c.Flags {
		if b, isBool := f.(*cli.BoolFlag); isBool && b.Name == name {
			return b.Aliases, true
		}
	}
	return nil, false
}

// TestDryRunAndVerbose: every command that changes anything has -n and
// -v with the same names and letters; no other command has a dry run
// (a command that gets one belongs in the list above).
func TestDryRunAndVerbose(t *testing.T) {
	var all []leafCommand
	leaves(newApp(strings.NewReader(""), io.Discard, io.Discard), "ccm", &all)
	seen := map[string]bool{}
	for _, l := range all {
		name, c := l.name, l.cmd
		seen[name] = true
		n, hasN := boolFlag(c, "dry-run")
		v, hasV := boolFlag(c, "verbose")
		if !slices.Contains(changing, name) {
			if hasN {
				t.Errorf("%s has --dry-run but is not in the list of commands that change something", name)
			}
			continue
		}
		if !hasN || !slices.Equal(n, []string{"n"}) {
			t.Errorf("%s: want --dry-run with -n, have %v %v", name, hasN, n)
		}
		if !hasV || !slices.Equal(v, []string{"v"}) {
			t.Errorf("%s: want --verbose with -v, have %v %v", name, hasV, v)
		}
	}
	for _, name := range changing {
		if !seen[name] {
			t.Errorf("%s is listed but is no command", name)
		}
	}
}
