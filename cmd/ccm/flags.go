package main

import "github.com/urfave/cli/v3"

// The two flags of every command that changes anything, with the same
// names, letters and meaning everywhere (docs/cli.md): -n does nothing and
// says what would be done; -v says it in full. Without -v a command
// prints its summary, whatever the size of the job; -v adds the plan
// after it, an item a line with its reason, what is kept and why too.

// dryRunFlag is -n/--dry-run; what says what the dry run prints, when a
// command has more to say than the summary.
func dryRunFlag(what string) cli.Flag {
	usage := "change nothing: print what would be done"
	if what != "" {
		usage += " (" + what + ")"
	}
	return &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: usage}
}

// verboseFlag is -v/--verbose; what says what it adds to the summary.
func verboseFlag(what string) cli.Flag {
	if what == "" {
		what = "the plan: every item with its reason, what is kept too"
	}
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also print " + what}
}

// jobsFlag is -j/--jobs: what runs at once, and how many by default (0
// means that default; the help shows it in words, not as 0).
func jobsFlag(what, def string) cli.Flag {
	return &cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: what, DefaultText: def}
}
