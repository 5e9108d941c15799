package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/prune"
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
	Key  string
	Last bool
	Info bool
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

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "info", Usage: "print the metadata instead of the content"},
			&cli.BoolFlag{Name: "last", Usage: "use the most recently stored key"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("get takes one KEY")
			}
			return runCacheGet(ctx, cacheGetOptions{globalOptions: globals(cmd), Key: cmd.Args().First(),
				Last: cmd.Bool("last"), Info: cmd.Bool("info")})
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

// ---- last

func newCacheLastCommand() *cli.Command {
	return &cli.Command{
		Name:  "last",
		Usage: "print the most recently stored key (--info: its metadata)",
		Description: `Prints the key of the most recent store (deduplicated stores count), as
recorded in last_key.

` + exitStatusHelp,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "info", Usage: "print its metadata"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("last takes no arguments")
			}
			return runCacheLast(ctx, globals(cmd), cmd.Bool("info"))
		},
	}
}

func runCacheLast(ctx context.Context, g globalOptions, info bool) error {
	st, err := openStore(g)
	if err != nil {
		return err
	}
	k, err := st.LastKey()
	if err != nil {
		return err
	}
	if info {
		m, err := st.Stat(k)
		if err != nil {
			return err
		}
		return printMeta(g, m)
	}
	if g.JSON {
		return writeJSON(g.Stdout, map[string]any{"key": k})
	}
	_, err = fmt.Fprintln(g.Stdout, k)
	return err
}

// ---- ls

type cacheLsOptions struct {
	globalOptions
	N int
}

func newCacheLsCommand() *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list stored blobs, newest first",
		Description: `Lists blobs by creation time, newest first: created, key, pin level, size,
bytes on disk, lines and source. -n 0 lists all.

` + exitStatusHelp,
		Flags: []cli.Flag{&cli.IntFlag{Name: "n", Value: 20, Usage: "list at most `N` blobs (0: all)"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("ls takes no arguments")
			}
			return runCacheLs(ctx, cacheLsOptions{globalOptions: globals(cmd), N: int(cmd.Int("n"))})
		},
	}
}

// listStore lists the store and reports entries with unusable metadata
// on stderr; bad is true when there were any (exit status 1).
func listStore(ctx context.Context, g globalOptions, st *ccm.Store) (l *ccm.Listing, bad bool, err error) {
	l, err = st.List(ctx, listProgress(newProgress(g.Stderr)))
	if err != nil {
		return nil, false, storeErrorHint(err)
	}
	for _, e := range l.Entries {
		if e.MetaErr != nil {
			fmt.Fprintf(g.Stderr, "ccm: %s: %v\n", e.MetaPath, e.MetaErr)
			bad = true
		}
	}
	return l, bad, nil
}

func runCacheLs(ctx context.Context, o cacheLsOptions) error {
	if o.N < 0 {
		return usagef("-n must be 0 or more")
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	l, bad, err := listStore(ctx, o.globalOptions, st)
	if err != nil {
		return err
	}
	var es []ccm.Entry
	for _, e := range l.Entries {
		if e.Meta != nil && !e.Orphan() {
			es = append(es, e)
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i].Meta, es[j].Meta
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return es[i].Key < es[j].Key
	})
	if o.N > 0 && len(es) > o.N {
		es = es[:o.N]
	}
	if o.JSON {
		out := make([]lsItem, len(es))
		for i, e := range es {
			b, _ := e.Meta.MarshalJSON()
			out[i] = lsItem{Meta: rawJSON(b), DiskBytes: e.DiskBytes()}
		}
		if err := writeJSON(o.Stdout, out); err != nil {
			return err
		}
	} else {
		for _, e := range es {
			m := e.Meta
			fmt.Fprintf(o.Stdout, "%s  %s  %-4s  %9s  %9s  %7d  %s\n", m.CreatedAt.Local().Format("2006-01-02 15:04"), e.Key,
				m.Pinned.Level, prune.HumanBytes(m.BytesUncompressed), prune.HumanBytes(e.DiskBytes()), m.Lines, m.Source.Summary())
		}
	}
	if bad {
		return errFindings
	}
	return nil
}

type lsItem struct {
	Meta      rawJSON `json:"meta"`
	DiskBytes int64   `json:"bytes_on_disk"`
}

// ---- stats

func newCacheStatsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "summarize the store",
		Description: `Prints the number of blobs, bytes on disk and uncompressed, the compression
ratio, counts by pin level and the oldest and newest access. Sizes use
1 MB = 1,048,576 bytes, the unit of ccm prune --max-size-mb.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("stats takes no arguments")
			}
			return runCacheStats(ctx, globals(cmd))
		},
	}
}

func runCacheStats(ctx context.Context, g globalOptions) error {
	st, err := openStore(g)
	if err != nil {
		return err
	}
	l, bad, err := listStore(ctx, g, st)
	if err != nil {
		return err
	}
	s := ccm.Summarize(l)
	if g.JSON {
		err = writeJSON(g.Stdout, struct {
			Store string `json:"store"`
			ccm.Stats
		}{st.Root(), s})
	} else {
		err = printStoreStats(g.Stdout, st.Root(), s)
	}
	if err != nil {
		return err
	}
	if bad {
		return errFindings
	}
	return nil
}

func printStoreStats(w io.Writer, root string, s ccm.Stats) error {
	fmt.Fprintf(w, "store:               %s\n", root)
	fmt.Fprintf(w, "items:               %d\n", s.Items)
	fmt.Fprintf(w, "bytes on disk:       %s (%d)\n", prune.HumanBytes(s.DiskBytes), s.DiskBytes)
	fmt.Fprintf(w, "bytes uncompressed:  %s (%d)\n", prune.HumanBytes(s.BytesUncompressed), s.BytesUncompressed)
	fmt.Fprintf(w, "compression ratio:   %.2fx\n", s.Ratio)
	fmt.Fprintf(w, "pinned hard:         %d\n", s.Hard)
	fmt.Fprintf(w, "pinned soft:         %d\n", s.Soft)
	fmt.Fprintf(w, "unpinned:            %d\n", s.Unpinned)
	fmt.Fprintf(w, "oldest access:       %s\n", fmtMinute(s.OldestAccess))
	fmt.Fprintf(w, "newest access:       %s\n", fmtMinute(s.NewestAccess))
	for _, x := range []struct {
		n    int
		what string
	}{{s.NoMeta, "blobs without metadata (kept; prune treats them as unpinned)"},
		{s.Orphans, "metadata files without a blob (ccm prune --gc-unreferenced removes them)"},
		{s.BadMeta, "unreadable metadata files (prune refuses until they are fixed or moved away)"},
		{s.Temps, "leftover temp files (ccm prune --gc-unreferenced removes those older than an hour)"}} {
		if x.n > 0 {
			fmt.Fprintf(w, "note:                %d %s\n", x.n, x.what)
		}
	}
	return nil
}

func fmtMinute(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// storeErrorHint adds what to do to common store errors.
func storeErrorHint(err error) error {
	if errors.Is(err, ccm.ErrNoStore) {
		return fmt.Errorf("%w (nothing has been stored yet, or --cache-dir / $CCM_CACHE_DIR is wrong)", err)
	}
	return err
}
