package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
	"ccm/search"
	"ccm/sessions"
)

type searchOptions struct {
	globalOptions
	Args  []string // the query
	Regex bool
	// Select is which sessions: --current, --session ID (a unique
	// prefix), --project P, --all (the default); its Args are unused.
	Select   sessions.Selector
	Since    string
	In       string
	Tool     string
	Archived bool
	// From, with Archived: the archives in object storage at
	// s3://BUCKET/PREFIX instead of the local ones; Endpoint its server.
	From     string
	Endpoint string
	Live     bool
	Limit    int
	Sort     string
	Reindex  bool
	Forget   bool
	Stats    bool
	Jobs     int
	Now      time.Time
}

func newSearchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find past messages in every session, live and archived",
		ArgsUsage: "QUERY...",
		Description: `Finds the messages that hold every word of QUERY (case-insensitive; "quoted
phrases" must appear word for word), or that --regex matches: user prompts,
assistant replies, tool inputs (commands, paths, patterns) and tool outputs,
including the content a purge moved to the CCM store and subagent transcripts.
Archived sessions are searched from their index parts, never unpacked.
--archived --from s3://BUCKET/PREFIX searches every machine's archives in
object storage instead (the newest archive of each session, the one
ccm unarchive --from restores): each archive is downloaded once, the first
time a search sees it, for its part to be written; later searches read
the parts alone.

Each hit: when, the project, the session, the line, who wrote it (and the
tool), a snippet around the match, and how to resume the session. Newest
first; --sort relevance ranks by how densely a message holds the words.

Every session is searched (--all) unless --current, --session ID (a prefix
of 4 characters or more that starts one session's id, live or archived) or
--project P narrows it; --since takes a duration with its unit (90m, 36h,
7d), as --older-than does.

The index lives in <ccm home>/search (0700, files 0600). Every search first
brings it up to date: new sessions and archives, the new bytes of grown
transcripts; removed sessions drop out. --reindex rebuilds it, --forget
deletes it. CCM_SEARCH_REDACT (ccm config) keeps matching text out of it.
Exit status 1 when nothing matched, as grep (with --json: 0, no hits).

` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "regex", Aliases: []string{"E"}, Usage: "QUERY is one regular expression (Go syntax, linear time)"},
			&cli.StringFlag{Name: "since", Usage: "only messages of the last `AGE` (90m, 36h, 7d)"},
			&cli.StringFlag{Name: "in", Usage: "only these parts, comma-separated: prompts, replies, tools, outputs"},
			&cli.StringFlag{Name: "tool", Usage: "only tool inputs and outputs of tool `NAME` (Bash, Read, ...)"},
			&cli.BoolFlag{Name: "archived", Usage: "only archived sessions"},
			&cli.BoolFlag{Name: "live", Usage: "only sessions in the config dir"},
			&cli.StringFlag{Name: "from", Usage: "with --archived: the archives in object storage, `s3://BUCKET/PREFIX`"},
			&cli.StringFlag{Name: "endpoint", Usage: endpointFlagUsage},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most `N` hits"},
			&cli.StringFlag{Name: "sort", Value: "time", Usage: "time (newest first) or relevance"},
			&cli.BoolFlag{Name: "reindex", Usage: "rebuild the index from scratch first"},
			&cli.BoolFlag{Name: "forget", Usage: "delete the index and exit"},
			&cli.BoolFlag{Name: "stats", Usage: "bring the index up to date and print its size"},
			jobsFlag("files indexed at once (with --from, archives downloaded at once too, up to 4)", "one per CPU"),
		}, searchSelectorFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			sel.Args = nil // the query
			return runSearch(ctx, searchOptions{globalOptions: globals(cmd), Args: cmd.Args().Slice(), Regex: cmd.Bool("regex"),
				Select: sel, Since: cmd.String("since"), In: cmd.String("in"), Tool: cmd.String("tool"), Archived: cmd.Bool("archived"),
				From: cmd.String("from"), Endpoint: cmd.String("endpoint"), Live: cmd.Bool("live"), Limit: int(cmd.Int("limit")),
				Sort: cmd.String("sort"), Reindex: cmd.Bool("reindex"), Forget: cmd.Bool("forget"), Stats: cmd.Bool("stats"),
				Jobs: int(cmd.Int("jobs"))})
		},
	}
}

// buildQuery checks the options and turns them into a query.
func buildQuery(o searchOptions, redact string) (*search.Query, error) {
	q := &search.Query{Tool: o.Tool, Archived: o.Archived, Live: o.Live, Session: o.Select.Session,
		Project: o.Select.Project, Limit: o.Limit}
	var err error
	switch {
	case o.Regex && len(o.Args) != 1:
		return nil, usagef("--regex takes one expression (quote it)")
	case o.Regex:
		if q.Regex, err = search.CompileRegex(o.Args[0]); err != nil {
			return nil, usageError{msg: err.Error()}
		}
	default:
		if q.Terms, err = search.ParseTerms(o.Args); err != nil {
			return nil, usageError{msg: err.Error() + ` (try: ccm search "exact phrase" word)`}
		}
	}
	if o.Archived && o.Live {
		return nil, usagef("give --archived or --live, not both")
	}
	if o.Limit < 1 {
		return nil, usagef("--limit must be 1 or more")
	}
	switch o.Sort {
	case "time":
	case "relevance":
		if o.Regex {
			return nil, usagef("--sort relevance needs words, not --regex")
		}
		q.Relevance = true
	default:
		return nil, usagef("--sort: %q is not time or relevance", o.Sort)
	}
	if o.Since != "" {
		d, err := parseDuration("since", o.Since)
		if err != nil {
			return nil, err
		}
		q.Since = o.Now.Add(-d)
	}
	if o.In != "" {
		for _, part := range strings.Split(o.In, ",") {
			bit, ok := search.KindNames[strings.TrimSpace(part)]
			if !ok {
				return nil, usagef("--in: %q is not prompts, replies, tools or outputs", part)
			}
			q.Kinds |= bit
		}
	}
	if q.Redact, err = search.ParseRedact(redact); err != nil {
		return nil, fmt.Errorf("CCM_SEARCH_REDACT: %v (fix it with ccm config)", err)
	}
	return q, nil
}

// searchSources are what the index covers for these options.
func searchSources(ctx context.Context, g globalOptions, redact []*regexp.Regexp) search.Sources {
	src := search.Sources{ConfigDir: g.ClaudeDir, ArchiveRoot: archiveRoot(g, ""), Redact: redact}
	src.Resolve, src.Has = storeResolver(ctx, g)
	return src
}

// searchPartOptions are how the index parts of archived sessions are read.
func searchPartOptions(ctx context.Context, g globalOptions, redact []*regexp.Regexp) search.PartOptions {
	o := search.PartOptions{Redact: redact}
	o.Resolve, o.Has = storeResolver(ctx, g)
	return o
}

// storeResolver reads stored content by key for stubs, and tells whether
// the store has a key's content; nil, nil without a store. Content is read
// as an export, not counted as an access: indexing is not a use, and
// would otherwise keep every stub's content young for prune's age limit.
func storeResolver(ctx context.Context, g globalOptions) (func(string) ([]byte, error), func(string) bool) {
	root := storeRoot(g)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, nil
	}
	st, err := ccm.Open(root)
	if err != nil {
		return nil, nil
	}
	resolve := func(k string) ([]byte, error) {
		key, err := ccm.ParseKey(k)
		if err != nil {
			return nil, err
		}
		rc, m, err := st.Export(ctx, key)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		var b bytes.Buffer
		b.Grow(int(min(max(m.BytesUncompressed, 0), 256<<20)))
		_, err = b.ReadFrom(rc)
		return b.Bytes(), err
	}
	has := func(k string) bool {
		key, err := ccm.ParseKey(k)
		if err != nil {
			return false
		}
		_, err = st.Stat(key)
		return err == nil
	}
	return resolve, has
}

// withIndex brings the index up to date (with a progress bar on a
// terminal for a long first build) and calls fn with it; a damaged index
// is rebuilt (search.With).
func withIndex(ctx context.Context, g globalOptions, src search.Sources, reindex bool, jobs int, progress io.Writer, fn func(ix *search.Index, st search.UpdateStats) error) error {
	dir := search.Dir(ccmHome(g))
	if reindex {
		if err := search.Forget(ctx, dir); err != nil {
			return err
		}
	}
	src.Jobs = jobs
	bar := newProgress(progress)
	started, last := false, int64(0)
	if bar != nil {
		src.Progress = func(done, total int64) {
			if !started && total > 64<<20 {
				bar.Start("indexing", total, true)
				started = true
			}
			if started {
				bar.Add(done - last)
				last = done
			}
		}
	}
	return search.With(ctx, dir, src, func(ix *search.Index, st search.UpdateStats) error {
		bar.Finish()
		return fn(ix, st)
	})
}

// currentSession refuses more than one of --current, --session and --all,
// and turns --current into the session it names (the one rule of
// sessions.Select).
func (o *searchOptions) currentSession(ctx context.Context) error {
	sel := o.Select
	if sel.Current && (sel.Session != "" || sel.All) || sel.Session != "" && sel.All {
		return usagef("give --current, --session or --all, not several of them")
	}
	if !sel.Current {
		return nil
	}
	s, err := selectSessions(ctx, o.globalOptions, sessions.Selector{Current: true}, sessions.SelectOptions{Now: o.Now})
	if err != nil {
		return err
	}
	if len(s.Todo) == 0 || s.Todo[0].Session == nil {
		return usagef("--current: no session of the working directory")
	}
	o.Select.Session, o.Select.Current = s.Todo[0].Session.ID, false
	return nil
}

func runSearch(ctx context.Context, o searchOptions) error {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Jobs < 0 {
		return usagef("--jobs must be positive")
	}
	if o.Forget {
		if len(o.Args) > 0 {
			return usagef("--forget takes no query")
		}
		dir := search.Dir(ccmHome(o.globalOptions))
		if err := search.Forget(ctx, dir); err != nil {
			return err
		}
		if !o.JSON {
			fmt.Fprintf(o.Stdout, "removed the search index %s\n", dir)
			return nil
		}
		return writeJSON(o.Stdout, map[string]any{"removed": dir})
	}
	if o.From != "" && !o.Archived {
		return usagef("--from goes with --archived")
	}
	if err := o.currentSession(ctx); err != nil {
		return err
	}
	cfg := maintainConfig(o.globalOptions)
	var q *search.Query
	var err error
	if o.Stats || (o.Reindex && len(o.Args) == 0) {
		if len(o.Args) > 0 {
			return usagef("--stats takes no query")
		}
		q = &search.Query{}
		if q.Redact, err = search.ParseRedact(cfg.String("CCM_SEARCH_REDACT")); err != nil {
			return fmt.Errorf("CCM_SEARCH_REDACT: %v (fix it with ccm config)", err)
		}
	} else if q, err = buildQuery(o, cfg.String("CCM_SEARCH_REDACT")); err != nil {
		return err
	}
	src := searchSources(ctx, o.globalOptions, q.Redact)
	if o.From != "" {
		t, r, err := searchRemote(ctx, o)
		if err != nil {
			return err
		}
		defer t.Close()
		src.Remote, q.Remote, q.Unarchive = r, r.URL, unarchiveFrom(o, r.URL)
	}
	start := time.Now()
	return withIndex(ctx, o.globalOptions, src, o.Reindex, o.Jobs, o.Stderr, func(ix *search.Index, up search.UpdateStats) error {
		if o.Stats || q.Terms == nil && q.Regex == nil {
			took := time.Since(start)
			st := ix.Stats()
			if o.JSON {
				return writeJSON(o.Stdout, map[string]any{"index": st, "update": up, "update_seconds": took.Seconds()})
			}
			fmt.Fprintf(o.Stdout, "%d messages of %d files in %d segments: %s of text, index %s (%.1f%%), archive parts %s\n",
				st.Docs, st.Files, st.Segments, ui.Bytes(st.TextBytes), ui.Bytes(st.IndexSize),
				100*float64(st.IndexSize)/float64(max(st.TextBytes, 1)), ui.Bytes(st.PartBytes))
			return nil
		}
		res, err := ix.Search(ctx, q, src.Resolve)
		if err != nil {
			return sessionIDError(err)
		}
		if o.JSON {
			if res.Hits == nil {
				res.Hits = []search.Hit{}
			}
			return writeJSON(o.Stdout, res)
		}
		if err := writeHits(o.globalOptions, res.Hits); err != nil {
			return err
		}
		if len(res.Hits) == 0 {
			return silentError{code: exitFindings}
		}
		return nil
	})
}
