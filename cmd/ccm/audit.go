package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/hooklib/monitor"
	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/transcript"
	"ccm/transcript/audit"
)

// auditOptions are the inputs of ccm audit.
type auditOptions struct {
	globalOptions
	Select sessions.Selector
	Top    int
}

func newAuditCommand() *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "show which tools' outputs fill a session's context, and what /compact or a purge would save",
		ArgsUsage: "[FILE|DIR...]",
		Description: `Reads the transcript after its last compact boundary (what came before is no
longer in the context) and prints the context fill from the last recorded
usage, the bytes and estimated tokens (bytes / 4) each tool's outputs put
into the context (Bash by command, MCP tools by server), and a targeted
suggestion: what /compact should drop, and what ccm purge --current would
save at least, by moving the outputs over 1,000 bytes from before the last
two prompts to the store (purge's defaults), less 400 bytes of stub each.
It is the report the context monitor's warning carries past
CONTEXT_AUDIT_THRESHOLD_PCT. Several transcripts are audited in turn
(--json: a list, one object when one file is named).

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.IntFlag{Name: "top", Value: 10, Usage: "list this many consumers"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			return runAudit(ctx, auditOptions{
				globalOptions: globals(cmd),
				Select:        sel,
				Top:           cmd.Int("top"),
			})
		},
	}
}

// auditReport is the JSON form of ccm audit.
type auditReport struct {
	Path           string          `json:"path"`
	FillTokens     int64           `json:"fill_tokens"`
	Window         int64           `json:"window"`
	FillPct        float64         `json:"fill_pct"`
	FillKnown      bool            `json:"fill_known"`
	TotalBytes     int64           `json:"tool_output_bytes"`
	TotalTokens    int64           `json:"tool_output_tokens_est"`
	Consumers      []auditConsumer `json:"consumers"`
	PurgeableBytes int64           `json:"purgeable_bytes"`
	PurgeableCount int             `json:"purgeable_outputs"`
	Suggestion     string          `json:"suggestion,omitempty"`
}

type auditConsumer struct {
	Key    string `json:"key"`
	Calls  int    `json:"calls"`
	Bytes  int64  `json:"bytes"`
	Tokens int64  `json:"tokens_est"`
}

func runAudit(ctx context.Context, o auditOptions) error {
	if o.Top < 1 {
		return usagef("--top must be 1 or more")
	}
	files, err := resolveInputs(ctx, o.globalOptions, o.Select)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		sayNoSessions(o.globalOptions, o.Select)
	}
	reports := []auditReport{}
	for i, t := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 && !o.JSON {
			fmt.Fprintln(o.Stdout)
		}
		r, err := auditFile(t.Path, o)
		if err != nil {
			return err
		}
		reports = append(reports, r)
	}
	if o.JSON {
		var v any = reports
		if len(files) == 1 && files[0].Named {
			v = reports[0] // one file named: one object, as before
		}
		return writeJSON(o.Stdout, v)
	}
	return nil
}

// auditFile audits one transcript, printing the report unless --json.
func auditFile(path string, o auditOptions) (auditReport, error) {
	f, err := openTranscript(path)
	if err != nil {
		return auditReport{}, err
	}
	defer f.Close()
	a := audit.New()
	if err := a.Update(f, true); err != nil {
		return auditReport{}, fileError(path, err)
	}
	fill, err := monitor.ReadFill(path, envInt("CONTEXT_MAX_TOKENS"))
	if err != nil {
		return auditReport{}, fileError(path, err)
	}
	r := auditReport{Path: path, FillTokens: fill.Tokens, Window: fill.Window, FillPct: fill.Pct(), FillKnown: fill.Known,
		TotalBytes: a.Total, TotalTokens: a.Total / audit.BytesPerToken, PurgeableBytes: a.Purgeable,
		PurgeableCount: a.PurgeableCount, Suggestion: a.Suggestion(3), Consumers: []auditConsumer{}}
	for _, c := range a.Top(o.Top) {
		r.Consumers = append(r.Consumers, auditConsumer{Key: c.Key, Calls: c.Count, Bytes: c.Bytes, Tokens: c.Tokens()})
	}
	if o.JSON {
		return r, nil
	}
	fmt.Fprintf(o.Stdout, "%s\n", path)
	if fill.Known {
		fmt.Fprintf(o.Stdout, "Context fill: %.0f%% (%s of %s tokens, last recorded usage)\n", fill.Pct(), ui.Count(fill.Tokens), ui.Count(fill.Window))
	} else {
		fmt.Fprintln(o.Stdout, "Context fill: unknown (no usage recorded since the last compaction)")
	}
	if rep := a.Report(o.Top); rep != "" {
		fmt.Fprintln(o.Stdout, rep)
	} else {
		fmt.Fprintln(o.Stdout, "No tool output since the last compaction.")
	}
	if r.Suggestion != "" {
		fmt.Fprintln(o.Stdout, r.Suggestion)
	}
	return r, nil
}

// openTranscript opens a transcript that a command reads only part of,
// refusing what indexFile refuses (a folder, an empty file, a file that is
// not a transcript) in the same words.
func openTranscript(path string) (*os.File, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		err = fileError(path, err)
	case fi.IsDir():
		err = fmt.Errorf("%s: is a directory", path)
	case fi.Size() == 0:
		err = fmt.Errorf("%s: %w", path, errEmptyFile)
	default:
		if err = transcript.Sniff(f); err != nil {
			err = fileError(path, err)
		} else if _, err = f.Seek(0, io.SeekStart); err != nil {
			err = fileError(path, err)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// envInt reads a non-negative integer from the environment (0 when unset
// or invalid).
func envInt(name string) int64 {
	var n int64
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil || n < 0 {
		return 0
	}
	return n
}
