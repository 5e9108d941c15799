package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
)

// maxInMemoryGet is the size up to which "ccm cache get" reads the content
// whole and verifies it before writing a byte. Larger content is verified
// in a first pass and streamed in a second, so corrupt content is never
// written either way.
const maxInMemoryGet = 256 << 20

func newCacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "store, read and list content in the CCM store",
		Description: `The CCM store keeps the content purge and the hooks remove from transcripts,
by sha256 key. Its directory is --cache-dir, $CCM_CACHE_DIR, or
<claude dir>/cache/ccm.

` + exitStatusHelp,
		Commands: []*cli.Command{
			newCachePutCommand(),
			newCacheGetCommand(),
			newCacheLastCommand(),
			newCacheLsCommand(),
			newCacheStatsCommand(),
			newCacheVerifyCommand(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q (see ccm cache --help)", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
	}
}

// openStore opens the store the global flags name.
func openStore(g globalOptions) (*ccm.Store, error) {
	return ccm.Open(storeRoot(g))
}

// parseKeyArg validates a key given on the command line: a usage error
// for anything that is not a well-formed key.
func parseKeyArg(s string) (ccm.Key, error) {
	k, err := ccm.ParseKey(strings.TrimSpace(s))
	if err != nil {
		return "", usageError{msg: err.Error()}
	}
	return k, nil
}

// ---- put

type cachePutOptions struct {
	globalOptions
	File   string // "" or "-" reads stdin
	Tool   string
	Source string
	Exit   int
	Pin    string
	Reason string
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
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("put takes one FILE (or - for stdin)")
			}
			return runCachePut(ctx, cachePutOptions{globalOptions: globals(cmd), File: cmd.Args().First(),
				Tool: cmd.String("tool"), Source: cmd.String("source"), Exit: int(cmd.Int("exit")),
				Pin: cmd.String("pin"), Reason: cmd.String("reason")})
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
	k, n, err := st.PutReader(ctx, in, src, pin, o.Reason)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{"key": k, "bytes": n})
	}
	_, err = fmt.Fprintln(o.Stdout, k)
	return err
}

// ---- get

type cacheGetOptions struct {
	globalOptions
	Key    string
	Last   bool
	Info   bool
	Select *lineSelect // nil or inactive: the whole content
}

func newCacheGetCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "write stored content to stdout (--info: its metadata)",
		ArgsUsage: "KEY",
		Description: `Writes the content stored under KEY (sha256:<64 hex>, or a legacy b2s:<16 hex>)
to stdout, after checking it against its key: corrupt content is reported
and never written. The access time and count are updated. --info prints the
metadata instead and counts no access. --last uses the most recently stored key.

Parts of the content (lines are numbered from 1, as in a capture's stub):
  --lines A:B   lines A to B, inclusive (A: to the end, :B from the start)
  --head N      the first N lines
  --tail N      the last N lines
  --grep RE     the lines matching the regular expression RE, each prefixed
                with its number and ':' (exit 1 when none matches)
The lines are written byte for byte. A malformed range, or one that starts
after the last line, is an error (exit 2).

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "info", Usage: "print the metadata instead of the content"},
			&cli.BoolFlag{Name: "last", Usage: "use the most recently stored key"},
			&cli.StringFlag{Name: "lines", Usage: "only lines `A:B` (1-based, inclusive)"},
			&cli.IntFlag{Name: "head", Usage: "only the first `N` lines"},
			&cli.IntFlag{Name: "tail", Usage: "only the last `N` lines"},
			&cli.StringFlag{Name: "grep", Usage: "only the lines matching `REGEX`, numbered"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("get takes one KEY")
			}
			sel, err := parseLineSelect(cmd.String("lines"), cmd.String("grep"), cmd.Int("head"), cmd.Int("tail"),
				cmd.IsSet("head"), cmd.IsSet("tail"))
			if err != nil {
				return err
			}
			if sel.active() && cmd.Bool("info") {
				return usagef("--info prints metadata; it takes no line selection")
			}
			return runCacheGet(ctx, cacheGetOptions{globalOptions: globals(cmd), Key: cmd.Args().First(),
				Last: cmd.Bool("last"), Info: cmd.Bool("info"), Select: sel})
		},
	}
}

// resolveKey returns the key named on the command line or, with last, the
// most recently stored one.
func resolveKey(st *ccm.Store, arg string, last bool) (ccm.Key, error) {
	switch {
	case last && arg != "":
		return "", usagef("give a KEY or --last, not both")
	case last:
		return st.LastKey()
	case arg == "":
		return "", usagef("missing KEY (or --last)")
	}
	return parseKeyArg(arg)
}

func runCacheGet(ctx context.Context, o cacheGetOptions) error {
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	k, err := resolveKey(st, o.Key, o.Last)
	if err != nil {
		return err
	}
	if o.Info {
		m, err := st.Stat(k)
		if err != nil {
			return err
		}
		return printMeta(o.globalOptions, m)
	}
	m, err := st.Stat(k)
	if err != nil {
		return err
	}
	if m.BytesUncompressed <= maxInMemoryGet {
		b, err := st.Get(ctx, k)
		if err != nil {
			return err
		}
		if o.Select.active() {
			return o.Select.write(o.Stdout, bytes.NewReader(b))
		}
		_, err = o.Stdout.Write(b)
		return err
	}
	if err := st.Verify(k); err != nil {
		return err
	}
	rc, _, err := st.Open(ctx, k)
	if err != nil {
		return err
	}
	defer rc.Close()
	if o.Select.active() {
		return o.Select.write(o.Stdout, rc)
	}
	_, err = io.Copy(o.Stdout, rc)
	return err
}

// printMeta prints a blob's metadata: JSON as stored with --json, else
// one field per line.
func printMeta(g globalOptions, m *ccm.Meta) error {
	if g.JSON {
		b, err := m.MarshalJSON()
		if err != nil {
			return err
		}
		return writeJSON(g.Stdout, rawJSON(b))
	}
	w := g.Stdout
	fmt.Fprintf(w, "key:          %s\n", m.Key)
	fmt.Fprintf(w, "created:      %s\n", fmtTime(m.CreatedAt))
	fmt.Fprintf(w, "last access:  %s\n", fmtTime(m.LastAccessAt))
	fmt.Fprintf(w, "accesses:     %d\n", m.AccessCount)
	fmt.Fprintf(w, "size:         %d bytes, %d lines\n", m.BytesUncompressed, m.Lines)
	if m.BytesCompressed > 0 {
		fmt.Fprintf(w, "on disk:      %d bytes, %s\n", m.BytesCompressed, m.Compression)
	} else {
		fmt.Fprintf(w, "on disk:      %s\n", m.Compression)
	}
	fmt.Fprintf(w, "source:       %s\n", m.Source.Summary())
	s := m.Source
	for _, f := range [][2]string{{"tool", s.ToolName}, {"command", s.Command}, {"file", s.FilePath}, {"pattern", s.Pattern},
		{"description", s.Description}, {"session", s.SessionPath}, {"cwd", s.Cwd}, {"media type", s.MediaType}} {
		if f[1] != "" {
			fmt.Fprintf(w, "  %-14s%s\n", f[0]+":", f[1])
		}
	}
	if s.ToolName != "" || s.ExitCode != 0 {
		fmt.Fprintf(w, "  %-14s%d\n", "exit code:", s.ExitCode)
	}
	if m.Pinned.Level == ccm.PinNone {
		fmt.Fprintf(w, "pinned:       none\n")
	} else {
		fmt.Fprintf(w, "pinned:       %s since %s", m.Pinned.Level, fmtTime(m.Pinned.PinnedAt))
		if m.Pinned.Reason != "" {
			fmt.Fprintf(w, " (%s)", m.Pinned.Reason)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// rawJSON lets writeJSON indent JSON that is already encoded.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05 -0700")
}
