package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"ccm/ccm"
	"ccm/internal/ui"

	"github.com/urfave/cli/v3"
)

type cachePutOptions struct {
	globalOptions
	File    string // "" or "-" reads stdin
	Tool    string
	Source  string
	Exit    int
	Pin     string
	Reason  string
	DryRun  bool // hash it and say whether it is stored already; store nothing
	Verbose bool // the stored blob's metadata after its key
}

func newCachePutCommand() *cli.Command {
	return &cli.Command{
		Name:      "put",
		Usage:     "store a file or stdin and print its key",
		ArgsUsage: "[FILE|-]",
		Description: `Stores the content atomically (deduplicated: storing it again only touches it
and may raise its pin) and prints its key. $CCM_COMPRESSION selects zstd
(auto, the default), gzip or none; content under 1 KiB, or that does not
shrink, is stored raw.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "tool name recorded as the source"},
			&cli.StringFlag{Name: "source", Usage: "free text describing where the content came from"},
			&cli.IntFlag{Name: "exit", Usage: "exit code recorded with the source"},
			&cli.StringFlag{Name: "pin", Value: "none", Usage: "pin level: none, soft or hard"},
			&cli.StringFlag{Name: "reason", Usage: "why it is pinned"},
			dryRunFlag("the key and whether it is stored already"),
			verboseFlag("the blob's metadata"),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("put takes one FILE (or - for stdin)")
			}
			return runCachePut(ctx, cachePutOptions{globalOptions: globals(cmd), File: cmd.Args().First(),
				Tool: cmd.String("tool"), Source: cmd.String("source"), Exit: int(cmd.Int("exit")),
				Pin: cmd.String("pin"), Reason: cmd.String("reason"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose")})
		},
	}
}

func runCachePut(ctx context.Context, o cachePutOptions) error {
	pin, err := ccm.ParsePinLevel(o.Pin)
	if err != nil {
		return usageError{msg: "--pin: " + err.Error()}
	}
	src := ccm.Source{ToolName: o.Tool, Description: o.Source, ExitCode: o.Exit}
	var in io.Reader = o.Stdin
	if o.File != "" && o.File != "-" {
		f, err := os.Open(o.File)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a directory", o.File)
		}
		in = f
		if abs, err := filepath.Abs(o.File); err == nil {
			src.FilePath = abs
		}
	} else if isTerminal(o.Stdin) {
		return usagef("put reads stdin, which is a terminal: give a FILE or pipe the content in")
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	if o.DryRun {
		return cachePutDryRun(o, st, in)
	}
	k, n, err := st.PutReader(ctx, in, src, pin, o.Reason)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"key": k, "bytes": n})
	}
	if _, err = fmt.Fprintln(o.Stdout, k); err != nil || !o.Verbose {
		return err
	}
	m, err := st.Stat(k)
	if err != nil {
		return err
	}
	return printMeta(o.globalOptions, m)
}

// cachePutDryRun hashes the content as put would key it and says whether
// the store has it already: put would then only touch it.
func cachePutDryRun(o cachePutOptions, st *ccm.Store, in io.Reader) error {
	h := sha256.New()
	n, err := io.Copy(h, in)
	if err != nil {
		return err
	}
	k, err := ccm.ParseKey("sha256:" + hex.EncodeToString(h.Sum(nil)))
	if err != nil {
		return err
	}
	_, err = st.Stat(k)
	stored := err == nil
	if err != nil && !errors.Is(err, ccm.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"key": k, "bytes": n, "dry_run": true, "stored": stored})
	}
	what := "would store"
	if stored {
		what = "stored already: put would only touch"
	}
	_, err = fmt.Fprintf(o.Stdout, "%s %s (%s)\n", what, k, ui.Bytes(n))
	return err
}

// ---- get
