package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/internal/ui"
)

// captureStatsOptions are the inputs of ccm capture stats.
type captureStatsOptions struct {
	globalOptions
	Project string
}

func newCaptureCommand() *cli.Command {
	return &cli.Command{
		Name:  "capture",
		Usage: "what the PostToolUse capture kept out of the model's context",
		Commands: []*cli.Command{{
			Name:  "stats",
			Usage: "captures and bytes saved, per tool and command pattern",
			Description: `Sums up <ccm home>/captures.jsonl (and its previous generation): per tool and
per command pattern (the program and, for git, go, npm and the like, its
subcommand; the file extension for Read), how many outputs were captured,
their bytes, and the bytes the model did not have to read (captured bytes
minus the preview it got). --project keeps the captures made in one project
directory.

` + exitStatusHelp,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "project", Usage: "only captures made in project `DIR`"},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				return runCaptureStats(ctx, captureStatsOptions{globalOptions: globals(cmd), Project: cmd.String("project")})
			},
		}},
	}
}

// captureGroup is one line of the statistics.
type captureGroup struct {
	Tool     string `json:"tool"`
	Pattern  string `json:"pattern"`
	Captures int    `json:"captures"`
	Bytes    int64  `json:"bytes"`
	Saved    int64  `json:"bytes_saved"`
}

func runCaptureStats(_ context.Context, o captureStatsOptions) error {
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	log := hooklib.CaptureLog(cfg.Home)
	project := o.Project
	if project != "" {
		if abs, err := filepath.Abs(project); err == nil {
			project = abs
		}
	}
	groups := map[[2]string]*captureGroup{}
	var total captureGroup
	total.Tool, total.Pattern = "all", "all"
	for _, path := range []string{log + ".1", log} {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			var r hooklib.CaptureRecord
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.Tool == "" {
				continue // a torn line
			}
			if project != "" && r.Project != project {
				continue
			}
			k := [2]string{r.Tool, r.Pattern}
			g := groups[k]
			if g == nil {
				g = &captureGroup{Tool: r.Tool, Pattern: r.Pattern}
				groups[k] = g
			}
			saved := int64(max(r.Bytes-r.Shown, 0))
			for _, x := range []*captureGroup{g, &total} {
				x.Captures++
				x.Bytes += int64(r.Bytes)
				x.Saved += saved
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	list := make([]captureGroup, 0, len(groups))
	for _, g := range groups {
		list = append(list, *g)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Saved != list[j].Saved {
			return list[i].Saved > list[j].Saved
		}
		return list[i].Tool+list[i].Pattern < list[j].Tool+list[j].Pattern
	})
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"groups": list, "total": total})
	}
	if total.Captures == 0 {
		fmt.Fprintln(o.Stdout, "no captures yet")
		return nil
	}
	t := ui.NewTable(ui.Col{Name: "tool"}, ui.Col{Name: "pattern", Shrink: true}, ui.Col{Name: "captures", Right: true},
		ui.Col{Name: "bytes", Right: true}, ui.Col{Name: "not read by the model", Right: true})
	for _, g := range append(list, total) {
		t.Add(g.Tool, g.Pattern, ui.Count(g.Captures), ui.Bytes(g.Bytes), ui.Bytes(g.Saved))
	}
	return writeTable(o.globalOptions, t)
}
