package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/internal/ui"
	"ccm/sessions/usage"
)

type duOptions struct {
	globalOptions
	Jobs int
	To   string
}

func newDuCommand() *cli.Command {
	return &cli.Command{
		Name:  "du",
		Usage: "what takes the disk under the Claude config dir, per project and in total",
		Description: `Per project, largest first: transcripts, subagent transcripts, tool results
(<session>/tool-results/), purge backups, file-history, todos, debug logs,
ccm's archives and the rest of the project folder (memory/, temp files); then
what belongs to no project (shell snapshots, the CCM store) and the totals.
Sizes are file sizes; a file with several hard links counts once. Only file
metadata is read (and one transcript head per project, for its real path).

` + exitStatusHelp,
		Flags: []cli.Flag{
			jobsFlag("project folders read at once", "2 per CPU"),
			&cli.StringFlag{Name: "to", Usage: "the archive folder (default <ccm home>/archive)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("du takes no arguments (see ccm du --help)")
			}
			return runDu(ctx, duOptions{globalOptions: globals(cmd), Jobs: int(cmd.Int("jobs")), To: cmd.String("to")})
		},
	}
}

var duLabels = map[string]string{
	usage.Transcripts: "TRANSCRIPTS", usage.Subagents: "SUBAGENTS", usage.ToolResults: "TOOL-RESULTS",
	usage.Backups: "BACKUPS", usage.FileHistory: "FILE-HISTORY", usage.Todos: "TODOS", usage.Debug: "DEBUG",
	usage.Archives: "ARCHIVES", usage.OtherProject: "OTHER",
}

func runDu(ctx context.Context, o duOptions) error {
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	rep, err := usage.Measure(ctx, o.ClaudeDir, usage.Options{StoreRoot: storeRoot(o.globalOptions), ArchiveRoot: archiveRoot(o.globalOptions, o.To), Jobs: o.Jobs})
	if err != nil {
		return err
	}
	if o.JSON {
		if rep.Projects == nil {
			rep.Projects = []*usage.Row{}
		}
		if err := writeJSON(o.Stdout, rep); err != nil {
			return err
		}
		return duStatus(o.globalOptions, rep)
	}
	tty := o.Terminal
	size := func(n int64) string {
		if tty {
			return ui.Bytes(n)
		}
		return fmt.Sprint(n)
	}
	cats := usage.ProjectCategories
	cols := []ui.Col{{Name: "TOTAL", Right: true}}
	for _, c := range cats {
		cols = append(cols, ui.Col{Name: duLabels[c], Right: true})
	}
	cols = append(cols, ui.Col{Name: "PROJECT", Shrink: true, Min: 30})
	var rows [][]string
	line := func(total int64, bytes map[string]int64, name string) {
		cells := []string{size(total)}
		for _, c := range cats {
			cells = append(cells, size(bytes[c]))
		}
		if tty {
			rows = append(rows, append(cells, name))
		} else {
			fmt.Fprintf(o.Stdout, "%s\t%s\n", strings.Join(cells, "\t"), name)
		}
	}
	for _, r := range rep.Projects {
		line(r.Total, r.Bytes, shortHome(r.Project))
	}
	var globalTotal int64
	for _, n := range rep.Global {
		globalTotal += n
	}
	line(globalTotal, rep.Global, fmt.Sprintf("(no project: shell snapshots %s, CCM store %s)", size(rep.Global[usage.Shell]), size(rep.Global[usage.Store])))
	line(rep.Total, rep.Totals, "TOTAL")
	if tty {
		// A narrow terminal drops the categories that hold least first:
		// the total and the largest stay.
		optional := make([]int, len(cats))
		for i := range cats {
			optional[i] = i + 1
		}
		sort.SliceStable(optional, func(a, b int) bool { return rep.Totals[cats[optional[a]-1]] < rep.Totals[cats[optional[b]-1]] })
		if err := writeTable(o.globalOptions, fittedTable(o.globalOptions, cols, rows, optional...)); err != nil {
			return err
		}
	}
	return duStatus(o.globalOptions, rep)
}

// duStatus reports the folders that could not be measured, after the
// table (which they would otherwise break up): exit status 1 when any.
func duStatus(g globalOptions, rep *usage.Report) error {
	failed := newItemErrors(g)
	for _, e := range rep.Errors {
		failed.add(errors.New(e))
	}
	return failed.status()
}
