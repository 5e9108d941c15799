package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/internal/fsutil"
	"ccm/purge"
	"ccm/report"
	"ccm/sessions"
)

// reportOptions are the inputs of ccm report.
type reportOptions struct {
	globalOptions
	Select  sessions.Selector
	Output  string
	Open    bool
	NoPurge bool
	Purge   bool // draw the purge curve whatever the size
	Top     int
	Now     time.Time
}

func newReportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a self-contained HTML page: context per request, what a purge would leave, what takes the disk",
		ArgsUsage: "[FILE|DIR...]",
		Description: `Per session: the context of every request from its recorded usage (input,
cache read, cache creation, output) against the model's window and its 70,
80 and 90 % lines, with compact boundaries and ccm purges marked; the
requests that grew it most and why; what ccm purge would leave (from a dry
run) as a second curve; the top consumers by tool and by Bash command; bytes
by category, the largest tool outputs and what ccm check finds.

--all: disk per project (as ccm du) and the largest sessions with size, age,
context at the last usage and whether they resume cleanly (ccm check);
--project, --older-than and --min-size narrow that page (alone too).
FILE|DIR..., --current and --session give the pages of those sessions.

One HTML file with inline CSS and SVG and a little inline script for sorting
and the hover read-out; it loads nothing from the network. Every string from
a transcript is escaped. The file is written to a temp file and renamed, so
a failure never leaves a partial page. The purge curve runs ccm purge's dry
run, which reads the transcript twice more: it is drawn for transcripts up to
300 MB unless --purge (always) or --no-purge (never) is given. Default output: ccm-report-<session>.html
(ccm-report-all.html with --all) in the working directory; -o - writes to
standard output. With --json, the figures of each session are printed as JSON
instead of a page.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the page to `FILE.html` (- for standard output)", TakesFile: true},
			&cli.BoolFlag{Name: "open", Usage: "open the page in the default browser"},
			&cli.BoolFlag{Name: "no-purge", Usage: "skip the purge dry run (no second curve)"},
			&cli.BoolFlag{Name: "purge", Usage: "draw the purge curve also for transcripts over 300 MB"},
			&cli.IntFlag{Name: "top", Value: 30, Usage: "with --all: list and check this many of the largest sessions"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			return runReport(ctx, reportOptions{
				globalOptions: globals(cmd),
				Select:        sel,
				Output:        cmd.String("output"),
				Open:          cmd.Bool("open"),
				NoPurge:       cmd.Bool("no-purge"),
				Purge:         cmd.Bool("purge"),
				Top:           int(cmd.Int("top")),
			})
		},
	}
}

// runReport collects the figures, renders the page and writes it.
func runReport(ctx context.Context, o reportOptions) error {
	// A page over many sessions (--all, or only narrowing selectors), or
	// the pages of the sessions named.
	all := o.Select.Given() && len(o.Select.Args) == 0 && !o.Select.Current && o.Select.Session == ""
	if o.Top < 0 {
		return usagef("--top must be 0 or more")
	}
	if o.JSON && all {
		return usagef("report --all writes HTML only; ccm sessions --json and ccm du --json give its figures")
	}
	if o.Purge && o.NoPurge {
		return usagef("give --purge or --no-purge, not both")
	}
	if o.Open && o.Output == "-" {
		return usagef("--open needs a file, not -o -")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	var files []sessions.Target
	if !all {
		var err error
		if files, err = resolveInputs(ctx, o.globalOptions, o.Select); err != nil {
			return err
		}
		if len(files) == 0 {
			// --project, --older-than or --min-size left out every one
			// named: no page, and not an error.
			sayNoSessions(o.globalOptions, o.Select)
			if o.JSON {
				return writeJSON(o.Stdout, []*report.Session{})
			}
			return nil
		}
	}
	out := o.Output
	if out == "" {
		out = "ccm-report-all.html"
		if !all {
			out = "ccm-report-" + strings.TrimSuffix(filepath.Base(files[0].Path), ".jsonl") + ".html"
		}
	}
	// Refuse a destination that cannot be written before reading anything.
	if out != "-" && !o.JSON {
		if err := checkOutputDir(out); err != nil {
			return err
		}
	}
	title := "ccm report: all sessions"
	if !all {
		title = "ccm report: " + strings.TrimSuffix(filepath.Base(files[0].Path), ".jsonl")
	}
	p := report.NewPage(title, version(), o.ClaudeDir, o.Now)
	if all {
		v, err := report.Overview(ctx, report.OverviewOptions{ClaudeDir: o.ClaudeDir, StoreRoot: storeRoot(o.globalOptions),
			ArchiveRoot: archiveRoot(o.globalOptions, ""), Now: o.Now, Top: o.Top, Select: o.Select})
		if err != nil {
			return err
		}
		p.SetOverview(v)
	} else {
		popt := purge.DefaultOptions()
		popt.InferLive = true
		popt.Live = o.Select.Current
		for _, in := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			ropt := report.Options{Purge: !o.NoPurge, PurgeOptions: popt}
			if !o.Purge {
				ropt.PurgeLimit = reportPurgeLimit
			}
			s, err := report.Collect(ctx, in.Path, ropt)
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return err
				}
				var pe *fs.PathError
				if errors.As(err, &pe) {
					return fileError(in.Path, err)
				}
				return err
			}
			p.AddSession(s)
		}
	}
	if o.JSON {
		return writeJSON(o.Stdout, p.Figures())
	}
	if out == "-" {
		return p.Render(o.Stdout)
	}
	if err := fsutil.WriteFile(out, fsutil.FileMode, p.Render); err != nil {
		return fmt.Errorf("write %s: %w", out, errors.Unwrap(err))
	}
	fmt.Fprintln(o.Stdout, out)
	if o.Open {
		if err := openBrowser(out); err != nil {
			fmt.Fprintf(o.Stderr, "ccm: could not open a browser (%v); the page is %s\n", err, out)
		}
	}
	return nil
}

// reportPurgeLimit is the largest transcript whose page gets the purge
// curve unless --purge asks for it: the dry run reads the file twice more
// and writes it once (about 8 s for 1 GB on two busy cores, where the rest
// of the page takes 3).
const reportPurgeLimit = 300_000_000

// checkOutputDir says clearly when the page's folder is missing or not
// writable (the atomic write would fail later with a temp file's name).
func checkOutputDir(out string) error {
	dir := filepath.Dir(out)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: folder %s does not exist (create it, or pick another -o)", out, dir)
	case err != nil:
		return fileError(dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a folder", out, dir)
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory (give a file name)", out)
	}
	f, err := fsutil.CreateTemp(out)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("%s: folder %s is not writable (permission denied)", out, dir)
		}
		return fmt.Errorf("%s: cannot write in %s: %w", out, dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// openBrowser hands the page to the desktop's opener without waiting.
func openBrowser(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", abs)
	case "windows":
		// The shell's file handler, without cmd's quoting of start.
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", abs)
	default:
		cmd = exec.Command("xdg-open", abs)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
