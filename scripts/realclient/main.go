// Command realclient drives the real Claude Code client offline, against
// a mock Messages API, for ccm's tests. It installs the pinned client
// (Claude Code 2.1.330) from the npm registry into ~/.cache/ccm-realclient
// on first use.
//
//	go run ./scripts/realclient install
//	go run ./scripts/realclient resume FILE [--out DIR] [--model M] [--prompt ping] [--session-id ID] [--timeout 120] [--quiet]
//	go run ./scripts/realclient resume --config-dir D --cwd C --session ID [--out DIR] ...
//	go run ./scripts/realclient session --settings SETTINGS.json [--script STEPS.json] [--prompt TEXT]
//	    [--allowed-tools "Bash Read"] [--resume TRANSCRIPT.jsonl] [--scope user|project|local|flag]
//	    [--marker REGEX] [--out DIR] [--timeout 180] [-- extra claude args]
//	go run ./scripts/realclient validate REQUEST.json [--prompt ping]
//
// resume exits 0 when the request is valid, 1 when it is not, 2 when no
// request was captured; session exits 0 when the session ran with no hook
// error, 1 when a hook errored or was rejected or the client failed, 2
// when the client was not driven. See scripts/realclient/harness.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"ccm/scripts/realclient/harness"

	"github.com/tidwall/gjson"
)

const usage = `usage: realclient install
       realclient resume FILE [--out DIR] [--model M] [--prompt ping] [--session-id ID] [--timeout 120] [--quiet]
       realclient resume --config-dir D --cwd C --session ID [--out DIR] [--model M] [--prompt ping] [--timeout 120] [--quiet]
       realclient session --settings SETTINGS.json [--script STEPS.json] [--prompt TEXT] [--allowed-tools "Bash Read"]
                          [--resume TRANSCRIPT.jsonl] [--scope user|project|local|flag] [--marker REGEX] [--out DIR]
                          [--timeout 180] [-- extra claude args]
       realclient validate REQUEST.json [--prompt TEXT]
The client is $REALCLIENT_CLAUDE, or Claude Code ` + harness.PinnedVersion + ` installed into ~/.cache/ccm-realclient.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "install":
		bin, err := harness.Install(ctx, nil) // npm's output goes to a log: one line on failure
		if err != nil {
			fmt.Fprintln(stderr, "realclient: "+err.Error())
			return 2
		}
		fmt.Fprintln(stdout, bin)
		return 0
	case "resume":
		return resume(ctx, args[1:], stdout, stderr)
	case "session":
		return session(ctx, args[1:], stdout, stderr)
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "realclient: unknown command %q\n%s", args[0], usage)
	return 2
}

// parse parses flags and positional arguments in any order; what follows
// a "--" is returned apart, untouched.
func parse(fs *flag.FlagSet, args []string) (positional, extra []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		if fs.NArg() == 0 {
			return positional, extra, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// client is --claude, or the installed pinned client.
func client(ctx context.Context, explicit string, stderr io.Writer) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	return harness.Install(ctx, nil)
}

func resume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harness.ResumeOptions
	var timeout int
	var quiet bool
	var claude string
	fs.StringVar(&o.Out, "out", "", "output folder (default: a new temporary folder)")
	fs.StringVar(&o.Model, "model", "", "--model for the client (default: the client picks)")
	fs.StringVar(&o.Prompt, "prompt", "ping", "the prompt sent after the history")
	fs.StringVar(&o.SessionID, "session-id", "", "the id to resume FILE under (default: its records' sessionId)")
	fs.StringVar(&o.ConfigDir, "config-dir", "", "resume a session that lives in this config dir")
	fs.StringVar(&o.Cwd, "cwd", "", "with --config-dir: the client's working directory")
	session := fs.String("session", "", "with --config-dir: the session id")
	fs.IntVar(&timeout, "timeout", 120, "seconds before the client is killed")
	fs.BoolVar(&quiet, "quiet", false, "only the verdict line")
	fs.StringVar(&claude, "claude", "", "the client binary (default: $REALCLIENT_CLAUDE or the pinned install)")
	pos, _, err := parse(fs, args)
	if err != nil {
		return 2
	}
	if o.ConfigDir != "" {
		o.SessionID = *session
		if len(pos) > 0 {
			fmt.Fprintln(stderr, "realclient: resume takes a FILE or --config-dir, not both")
			return 2
		}
	} else if len(pos) != 1 {
		fmt.Fprint(stderr, "realclient: resume needs one transcript FILE\n"+usage)
		return 2
	} else {
		o.File = pos[0]
	}
	o.Timeout = time.Duration(timeout) * time.Second
	name := filepath.Base(o.File)
	if o.File == "" {
		name = *session
	}
	if o.Client, err = client(ctx, claude, stderr); err != nil {
		fmt.Fprintf(stdout, "%s %s: %v\n", harness.NotDriven, name, err)
		return 2
	}
	rep, err := harness.Resume(ctx, o)
	if rep == nil {
		fmt.Fprintf(stdout, "%s %s: %v\n", harness.NotDriven, name, err)
		return 2
	}
	fmt.Fprintln(stdout, rep.Summary())
	if err != nil {
		fmt.Fprintln(stderr, "realclient: "+err.Error())
	}
	if !quiet {
		for i, p := range rep.Problems {
			if i < 20 {
				fmt.Fprintln(stdout, "  problem: "+p)
			}
		}
		for i, w := range rep.Warnings {
			if i < 5 {
				fmt.Fprintln(stdout, "  warning: "+w)
			}
		}
		if b := rep.ChainBreak; b != nil {
			fmt.Fprintf(stdout, "  note: parent chain breaks at line %d (missing parent %s)\n", b.Line, b.MissingParent)
		}
		if rep.ClaudeVersion != harness.PinnedVersion {
			fmt.Fprintf(stdout, "  warning: claude %s, the harness is written for %s\n", rep.ClaudeVersion, harness.PinnedVersion)
		}
		if fa := rep.FileAfter; fa != nil && !fa.OriginalPrefixIntact {
			fmt.Fprintln(stdout, "  note: the client rewrote the session file (the original bytes are no longer its prefix)")
		}
	}
	return rep.ExitCode()
}

func session(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("session", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harness.SessionOptions
	var timeout int
	var claude string
	fs.StringVar(&o.Settings, "settings", "", "settings file with the hooks (required)")
	fs.StringVar(&o.Script, "script", "", "JSON list of mock steps (default: Bash, Read, then text)")
	fs.StringVar(&o.Prompt, "prompt", "Please say hello and read notes.txt.", "the prompt")
	fs.StringVar(&o.AllowedTools, "allowed-tools", "Bash Read Write Edit Glob Grep", "--allowedTools for the client")
	fs.StringVar(&o.Resume, "resume", "", "a transcript to resume instead of starting fresh")
	fs.StringVar(&o.Scope, "scope", "user", "where the settings go: user, project, local or flag")
	fs.StringVar(&o.Marker, "marker", harness.DefaultMarker, "regexp whose matches are tracked into requests and the transcript")
	fs.StringVar(&o.Out, "out", "", "output folder (default: a new temporary folder)")
	fs.IntVar(&timeout, "timeout", 180, "seconds before the client is killed")
	fs.StringVar(&claude, "claude", "", "the client binary (default: $REALCLIENT_CLAUDE or the pinned install)")
	pos, extra, err := parse(fs, args)
	if err != nil {
		return 2
	}
	if o.Settings == "" || len(pos) > 0 {
		fmt.Fprint(stderr, "realclient: session needs --settings and no positional argument (extra client arguments go after --)\n"+usage)
		return 2
	}
	o.Extra = extra
	o.Timeout = time.Duration(timeout) * time.Second
	if o.Client, err = client(ctx, claude, stderr); err != nil {
		fmt.Fprintf(stdout, "%s hook-session: %v\n", harness.NotDriven, err)
		return 2
	}
	rep, err := harness.Session(ctx, o)
	if rep == nil {
		fmt.Fprintf(stdout, "%s hook-session: %v\n", harness.NotDriven, err)
		return 2
	}
	fmt.Fprintln(stdout, rep.Summary())
	if err != nil {
		fmt.Fprintln(stderr, "realclient: "+err.Error())
	}
	return rep.ExitCode()
}

// validate re-checks a saved request body (or a requests/NNN.json record).
func validate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prompt := fs.String("prompt", "", "expected text of the last user block")
	pos, _, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprint(stderr, "realclient: validate needs one REQUEST.json\n"+usage)
		return 2
	}
	body, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "realclient: "+err.Error())
		return 2
	}
	if !gjson.GetBytes(body, "messages").Exists() && gjson.GetBytes(body, "body").IsObject() {
		body = []byte(gjson.GetBytes(body, "body").Raw)
	}
	v := harness.Validate(body, *prompt)
	verdict := harness.Valid
	if !v.Valid() {
		verdict = harness.Invalid
	}
	fmt.Fprintf(stdout, "%s messages=%d tool_pairs=%d request_bytes=%d thinking=%d problems=%d warnings=%d\n", verdict,
		v.Stats.Messages, v.Stats.ToolPairs, v.Stats.RequestBytes, v.Stats.Thinking, len(v.Problems), len(v.Warnings))
	for _, p := range v.Problems {
		fmt.Fprintln(stdout, "  problem: "+p)
	}
	for _, w := range v.Warnings {
		fmt.Fprintln(stdout, "  warning: "+w)
	}
	if !v.Valid() {
		return 1
	}
	return 0
}
