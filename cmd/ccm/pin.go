package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
)

type pinOptions struct {
	globalOptions
	Key     string
	Last    bool
	Level   string
	Reason  string
	DryRun  bool
	Verbose bool // the blob's metadata after the line
}

func newPinCommand() *cli.Command {
	return &cli.Command{
		Name:      "pin",
		Usage:     "protect a stored blob from pruning",
		ArgsUsage: "KEY",
		Description: `Sets the pin level of a stored blob: soft blobs are pruned only by a size limit
and only after every unpinned blob; hard blobs are never pruned. --level
none unpins. --last pins the most recently stored key.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "level", Value: "soft", Usage: "soft, hard or none"},
			&cli.StringFlag{Name: "reason", Usage: "why it is pinned"},
			&cli.BoolFlag{Name: "last", Usage: "pin the most recently stored key"},
			dryRunFlag(""),
			verboseFlag("the blob's metadata"),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("pin takes one KEY")
			}
			return runPin(ctx, pinOptions{globalOptions: globals(cmd), Key: cmd.Args().First(), Last: cmd.Bool("last"),
				Level: cmd.String("level"), Reason: cmd.String("reason"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose")})
		},
	}
}

func runPin(ctx context.Context, o pinOptions) error {
	level, err := ccm.ParsePinLevel(o.Level)
	if err != nil {
		return usageError{msg: "--level: " + err.Error()}
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	k, err := resolveKey(st, o.Key, o.Last)
	if err != nil {
		return err
	}
	var m *ccm.Meta
	if o.DryRun {
		// What SetPin checks first: the blob is there, its metadata readable.
		if m, err = st.Stat(k); err != nil {
			return err
		}
		m.Pinned.Level, m.Pinned.Reason = level, o.Reason
	} else if m, err = st.SetPin(ctx, k, level, o.Reason); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"key": k, "pinned": m.Pinned, "dry_run": o.DryRun})
	}
	verb := map[[2]bool]string{{false, false}: "pinned", {false, true}: "unpinned", {true, false}: "would pin", {true, true}: "would unpin"}[[2]bool{o.DryRun, level == ccm.PinNone}]
	if level == ccm.PinNone {
		fmt.Fprintf(o.Stdout, "%s %s\n", verb, k)
	} else {
		fmt.Fprintf(o.Stdout, "%s %s as %s\n", verb, k, level)
	}
	if o.Verbose {
		return printMeta(o.globalOptions, m)
	}
	return nil
}

func newUnpinCommand() *cli.Command {
	return &cli.Command{
		Name:      "unpin",
		Usage:     "remove a blob's pin",
		ArgsUsage: "KEY",
		Description: `Sets the pin level of a stored blob to none, so every prune rule applies to it.

` + exitStatusHelp,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "last", Usage: "unpin the most recently stored key"}, dryRunFlag(""), verboseFlag("the blob's metadata")},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("unpin takes one KEY")
			}
			return runPin(ctx, pinOptions{globalOptions: globals(cmd), Key: cmd.Args().First(), Last: cmd.Bool("last"), Level: "none",
				DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose")})
		},
	}
}

func newPinsCommand() *cli.Command {
	return &cli.Command{
		Name:  "pins",
		Usage: "list pinned blobs",
		Description: `Lists soft- and hard-pinned blobs: level, size, tool, key, when and why.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("pins takes no arguments")
			}
			return runPins(ctx, globals(cmd))
		},
	}
}

// pinItem is the JSON form of one pinned blob.
type pinItem struct {
	Key      ccm.Key      `json:"key"`
	Level    ccm.PinLevel `json:"level"`
	Reason   string       `json:"reason"`
	PinnedAt string       `json:"pinned_at"`
	Bytes    int64        `json:"bytes"`
	Tool     string       `json:"tool"`
}

func runPins(ctx context.Context, g globalOptions) error {
	st, err := openStore(g)
	if err != nil {
		return err
	}
	l, bad, err := listStore(ctx, g, st)
	if err != nil {
		return err
	}
	var items []pinItem
	for _, e := range l.Entries {
		if e.Meta == nil || e.Orphan() || e.Meta.Pinned.Level == ccm.PinNone {
			continue
		}
		m := e.Meta
		items = append(items, pinItem{Key: e.Key, Level: m.Pinned.Level, Reason: m.Pinned.Reason,
			PinnedAt: ccm.FormatTime(m.Pinned.PinnedAt), Bytes: m.BytesUncompressed, Tool: m.Source.Tool()})
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Level != items[j].Level {
			return items[i].Level > items[j].Level
		}
		return items[i].Key < items[j].Key
	})
	if g.JSON {
		if items == nil {
			items = []pinItem{}
		}
		err = writeJSON(g.Stdout, items)
	} else {
		err = printPins(g, items)
	}
	if err != nil {
		return err
	}
	if bad {
		return errFindings
	}
	return nil
}

// printPins lists the pinned blobs: level, size, tool, key (whole, to be
// copied) and reason; a narrow terminal drops the tool, then the size.
func printPins(g globalOptions, items []pinItem) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(g.Stdout, "no pinned blobs")
		return err
	}
	cols := []ui.Col{{}, {Right: true}, {}, {}, {Shrink: true}}
	rows := make([][]string, len(items))
	for i, p := range items {
		rows[i] = []string{p.Level.String(), ui.Bytes(p.Bytes), p.Tool, string(p.Key), p.Reason}
	}
	return writeTable(g, fittedTable(g, cols, rows, 2, 1))
}
