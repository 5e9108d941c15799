package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

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
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "project folders read at once (default: 2 per CPU)"},
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
	tty := isTerminal(o.Stdout)
	size := func(n int64) string {
		if tty {
			return humanBytes(n)
		}
		return fmt.Sprint(n)
	}
	var tw interface {
		Write([]byte) (int, error)
		Flush() error
	} = tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !tty {
		tw = plainWriter{o.Stdout}
	}
	cols := usage.ProjectCategories
	if tty {
		head := []string{"TOTAL"}
		for _, c := range cols {
			head = append(head, duLabels[c])
		}
		fmt.Fprintf(tw, "%s\t  PROJECT\n", strings.Join(head, "\t"))
	}
	sep := "" // the tab ends the last number; a terminal gets a gap too
	if tty {
		sep = "  "
	}
	line := func(total int64, bytes map[string]int64, name string) {
		cells := []string{size(total)}
		for _, c := range cols {
			cells = append(cells, size(bytes[c]))
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", strings.Join(cells, "\t"), sep, name)
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
	if err := tw.Flush(); err != nil {
		return err
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

// plainWriter writes tab-separated lines as they are, for pipes.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) Flush() error                { return nil }
