package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
)

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
	l, err = st.List(ctx, ui.DoneTotal(newProgress(g.Stderr).Progress(), "reading the store"))
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
		// The key stays whole, to be copied; a narrow terminal drops the
		// lines, the bytes on disk, then the creation time.
		cols := []ui.Col{{}, {}, {}, {Right: true}, {Right: true}, {Right: true}, {Shrink: true}}
		rows := make([][]string, len(es))
		for i, e := range es {
			m := e.Meta
			rows[i] = []string{m.CreatedAt.Local().Format("2006-01-02 15:04"), string(e.Key), m.Pinned.Level.String(),
				ui.Bytes(m.BytesUncompressed), ui.Bytes(e.DiskBytes()), ui.Count(m.Lines), m.Source.Summary()}
		}
		if err := writeTable(o.globalOptions, fittedTable(o.globalOptions, cols, rows, 5, 4, 0)); err != nil {
			return err
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
ratio, counts by pin level, the oldest and newest access, and the packs
(how many blobs they hold, their unused bytes, which a prune repacks).
Blobs in packs are read from the pack index alone. Sizes use
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
	fmt.Fprintf(w, "items:               %s\n", ui.Count(s.Items))
	fmt.Fprintf(w, "bytes on disk:       %s (%s)\n", ui.Bytes(s.DiskBytes), ui.Count(s.DiskBytes))
	fmt.Fprintf(w, "bytes uncompressed:  %s (%s)\n", ui.Bytes(s.BytesUncompressed), ui.Count(s.BytesUncompressed))
	fmt.Fprintf(w, "compression ratio:   %.2fx\n", s.Ratio)
	fmt.Fprintf(w, "pinned hard:         %s\n", ui.Count(s.Hard))
	fmt.Fprintf(w, "pinned soft:         %s\n", ui.Count(s.Soft))
	fmt.Fprintf(w, "unpinned:            %s\n", ui.Count(s.Unpinned))
	fmt.Fprintf(w, "oldest access:       %s\n", fmtMinute(s.OldestAccess))
	fmt.Fprintf(w, "newest access:       %s\n", fmtMinute(s.NewestAccess))
	if s.Packs > 0 {
		fmt.Fprintf(w, "packs:               %d (%d blobs in them, the rest in blob files; %s unused)\n",
			s.Packs, s.Packed, ui.Bytes(s.PackDeadBytes))
	}
	for _, x := range []struct {
		n    int
		what string
	}{{s.NoMeta, "blobs without metadata (kept; prune treats them as unpinned)"},
		{s.Orphans, "metadata files without a blob (ccm prune --gc-unreferenced removes them)"},
		{s.BadMeta, "unreadable metadata files (prune refuses until they are fixed or moved away)"},
		{s.Temps, "leftover temp files (ccm prune --gc-unreferenced removes those older than an hour)"},
		{s.MissingPacks, "packs named by the index are missing (ccm cache verify names their blobs)"},
		{s.BadIndexLines, "unreadable lines in packs/index.jsonl (ccm cache verify lists them)"}} {
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
