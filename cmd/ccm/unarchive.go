package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/archive"
	"ccm/internal/sessions"
)

type unarchiveOptions struct {
	globalOptions
	IDs      []string
	Project  string
	To       string
	From     string // s3://BUCKET/PREFIX
	Endpoint string
	Force    bool
	Touch    bool
	Jobs     int
	Now      time.Time
}

func newUnarchiveCommand() *cli.Command {
	return &cli.Command{
		Name:      "unarchive",
		Usage:     "put archived sessions back, byte for byte, where claude --resume finds them",
		ArgsUsage: "ID... | --project P",
		Description: `Verifies each archive completely (every file's SHA-256 against the manifest,
the archive's own hash against its sidecar) and only then restores its files
under the Claude config dir with their modes and modification times, and
removes the archive. A corrupt or truncated archive is refused and left as
it is. A file that already exists where a restored one would go is refused
unless --force, which renames it to <file>.backup.<stamp> first.

Restored files keep their old mtimes, and Claude Code's sweep deletes
sessions by mtime: a session older than cleanupPeriodDays is deleted at
the next start of Claude Code. ccm warns; --touch gives the restored files
the current time instead.

--from s3://BUCKET/PREFIX restores from S3-compatible object storage (any
machine's archives under the prefix, the newest when several have the
session; docs/remote.md): each archive is downloaded and checked the same
way, its stubs' content goes into the CCM store, and it stays in the bucket.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "project", Usage: "every archived session of project `P`"},
			&cli.StringFlag{Name: "to", Usage: "archive folder (default <ccm home>/archive)"},
			&cli.StringFlag{Name: "from", Usage: "restore from object storage: `s3://BUCKET/PREFIX`"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			&cli.BoolFlag{Name: "force", Usage: "restore over existing files, keeping each as a backup"},
			&cli.BoolFlag{Name: "touch", Usage: "give restored files the current time (safe from the sweep)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "sessions restored at once (default: number of CPUs)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o := unarchiveOptions{globalOptions: globals(cmd), IDs: cmd.Args().Slice(), Project: cmd.String("project"),
				To: cmd.String("to"), From: cmd.String("from"), Endpoint: cmd.String("endpoint"), Force: cmd.Bool("force"), Touch: cmd.Bool("touch"), Jobs: int(cmd.Int("jobs"))}
			return runUnarchive(ctx, o)
		},
	}
}

type unarchiveItem struct {
	Session string `json:"session"`
	Archive string `json:"archive"`
	Project string `json:"project,omitempty"`
	Files   int    `json:"files,omitempty"`
	Result  string `json:"result"` // restored, failed
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
}

func runUnarchive(ctx context.Context, o unarchiveOptions) error {
	if (len(o.IDs) > 0) == (o.Project != "") {
		return usagef("give session ids or --project P (see ccm unarchive --help)")
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.From != "" {
		if o.To != "" {
			return usagef("give --from s3://... or --to DIR, not both")
		}
		return runUnarchiveRemote(ctx, o)
	}
	if _, err := sessions.ListProjects(o.ClaudeDir); err != nil {
		return err // a missing config dir
	}
	root := archiveRoot(o.globalOptions, o.To)
	lk, err := maintenanceLock(ctx, o.globalOptions)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	list, err := archive.List(root)
	if err != nil {
		return err
	}
	var todo []*unarchiveItem
	found := map[string]bool{}
	for _, l := range list {
		id, folder := "", ""
		project := ""
		if l.Manifest != nil {
			id, folder, project = l.Manifest.Session, l.Manifest.Folder, l.Manifest.Project
		} else {
			id = trimExt(l.Path)
		}
		switch {
		case o.Project != "":
			if l.Manifest == nil || !sessions.MatchProject(o.Project, project, folder) {
				continue
			}
		default:
			if !contains(o.IDs, id) {
				continue
			}
		}
		found[id] = true
		todo = append(todo, &unarchiveItem{Session: id, Archive: l.Path, Project: project})
	}
	for _, id := range o.IDs {
		if !found[id] {
			return fmt.Errorf("no archive of session %s under %s (ccm sessions --archived lists them)", id, root)
		}
	}
	if len(todo) == 0 {
		return fmt.Errorf("no archived session of project %s under %s", o.Project, root)
	}
	ret := sessions.ReadRetention(o.ClaudeDir)
	var mu sync.Mutex
	failed := 0
	forEach(ctx, o.Stderr, o.JSON, "restoring", len(todo), o.Jobs, func(i int) {
		it := todo[i]
		m, err := archive.Extract(ctx, it.Archive, o.ClaudeDir, archive.ExtractOptions{Force: o.Force, Touch: o.Touch, Now: o.Now})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			it.Result, it.Error = "failed", err.Error()
			failed++
			if !o.JSON {
				fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
			}
			return
		}
		it.Result, it.Files = "restored", len(m.Files)
		if !o.Touch && ret.Paused == "" && o.Now.Sub(m.LastModified) >= ret.Period() {
			it.Warning = fmt.Sprintf("last written %s ago, beyond cleanupPeriodDays (%g days): Claude Code's sweep deletes it at its next start (run with --touch, or resume it now)",
				humanAge(o.Now.Sub(m.LastModified)), ret.Days)
		}
		if !o.JSON {
			fmt.Fprintf(o.Stdout, "restored %s (%d files) to %s\n", it.Session, it.Files, shortHome(m.Project))
			if it.Warning != "" {
				fmt.Fprintf(o.Stderr, "ccm: warning: %s: %s\n", it.Session, it.Warning)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"sessions": todo, "failed": failed}); err != nil {
			return err
		}
	}
	if failed > 0 {
		if len(todo) == 1 {
			return silentError{code: exitError}
		}
		return silentError{code: exitFindings}
	}
	return nil
}

func trimExt(p string) string {
	b := p
	if i := len(b) - len(archive.Ext); i > 0 {
		b = b[:i]
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return b[i+1:]
		}
	}
	return b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
