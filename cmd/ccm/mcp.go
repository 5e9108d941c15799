package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/mcpserve"
	"ccm/search"
	"ccm/search/searchtext"
	"ccm/sessions"
)

type mcpOptions struct {
	globalOptions
}

func newMCPCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve past sessions and stored outputs to Claude Code (Model Context Protocol, stdio)",
		Description: `Runs a Model Context Protocol server on stdin and stdout with three tools:

  search_sessions   ccm search: past messages of every session, live and
                    archived, as JSON hits (session, line, snippet, ...)
  read_session      a page of a past session's conversation, from a line on
  read_output       lines of a stored or captured output by its key (as
                    ccm cache get KEY --lines/--head/--tail/--grep)

ccm install --mcp registers it with Claude Code (user scope); ccm uninstall
removes it. Each call brings the search index up to date first.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("mcp takes no arguments")
			}
			return runMCP(ctx, mcpOptions{globalOptions: globals(cmd)})
		},
	}
}

// The tools' inputs.
type (
	mcpSearchIn struct {
		Query    string `json:"query"`
		Regex    bool   `json:"regex"`
		Project  string `json:"project"`
		Session  string `json:"session"`
		Since    string `json:"since"`
		In       string `json:"in"`
		Tool     string `json:"tool"`
		Archived bool   `json:"archived"`
		Limit    int    `json:"limit"`
	}
	mcpPageIn struct {
		Session string `json:"session"`
		Line    int    `json:"line"`
		Count   int    `json:"count"`
		Agent   string `json:"agent"`
	}
	mcpOutputIn struct {
		Key   string `json:"key"`
		Lines string `json:"lines"`
		Head  int    `json:"head"`
		Tail  int    `json:"tail"`
		Grep  string `json:"grep"`
	}
)

// The tools' input schemas: what the model reads about each argument.
const (
	mcpSearchSchema = `{"type":"object","properties":{
"query":{"type":"string","description":"words that must all appear in one message (case-insensitive); \"quoted phrases\" word for word; a regular expression when regex is true"},
"regex":{"type":"boolean","description":"query is a regular expression (Go syntax)"},
"project":{"type":"string","description":"only this project (its path)"},
"session":{"type":"string","description":"only this session (its id, or a prefix of 4 characters or more that starts no other id)"},
"since":{"type":"string","description":"only messages of the last AGE: 7d, 36h, 90m"},
"in":{"type":"string","description":"only these parts, comma-separated: prompts, replies, tools, outputs"},
"tool":{"type":"string","description":"only inputs and outputs of this tool (Bash, Read, ...)"},
"archived":{"type":"boolean","description":"only archived sessions"},
"limit":{"type":"integer","description":"at most this many hits (default 20)"}},
"required":["query"],"additionalProperties":false}`
	mcpPageSchema = `{"type":"object","properties":{
"session":{"type":"string","description":"the session id (or a unique prefix), as search_sessions returns it"},
"line":{"type":"integer","description":"the first line to read (a hit's line; default 1)"},
"count":{"type":"integer","description":"how many messages (default 20, at most 200)"},
"agent":{"type":"string","description":"a subagent's id, to read its transcript instead"}},
"required":["session"],"additionalProperties":false}`
	mcpOutputSchema = `{"type":"object","properties":{
"key":{"type":"string","description":"the store key (sha256:...) that a [CCM_CACHED] stub or a capture names"},
"lines":{"type":"string","description":"a line range A:B (1-based, inclusive)"},
"head":{"type":"integer","description":"the first N lines"},
"tail":{"type":"integer","description":"the last N lines"},
"grep":{"type":"string","description":"the lines matching this regular expression, numbered"}},
"required":["key"],"additionalProperties":false}`
)

// mcpMaxOutput bounds what read_output returns in one call: a model asks
// for a range when there is more.
const mcpMaxOutput = 100_000

func runMCP(ctx context.Context, o mcpOptions) error {
	return newMCPServer(o.globalOptions).Serve(ctx, o.Stdin, o.Stdout)
}

// newMCPServer builds the server and its tools.
func newMCPServer(g globalOptions) *mcpserve.Server {
	return &mcpserve.Server{Name: "ccm", Version: version(),
		Instructions: "ccm keeps the user's past Claude Code sessions, live and archived, and the outputs it stored. " +
			"Search them with search_sessions, read around a hit with read_session, and read a stored output " +
			"(a [CCM_CACHED] stub's key) with read_output.",
		Tools: []mcpserve.Tool{
			{Name: "search_sessions", InputSchema: json.RawMessage(mcpSearchSchema),
				Description: "Search the user's past Claude Code sessions (prompts, replies, tool inputs and outputs, stored outputs, subagents, archived sessions). Newest first.",
				Call: func(ctx context.Context, args json.RawMessage) (string, error) {
					var in mcpSearchIn
					if err := mcpserve.Args(args, &in); err != nil {
						return "", err
					}
					return mcpSearch(ctx, g, in)
				}},
			{Name: "read_session", InputSchema: json.RawMessage(mcpPageSchema),
				Description: "Read a page of a past session's conversation from a line on (use a search hit's session and line).",
				Call: func(ctx context.Context, args json.RawMessage) (string, error) {
					var in mcpPageIn
					if err := mcpserve.Args(args, &in); err != nil {
						return "", err
					}
					return mcpPage(ctx, g, in)
				}},
			{Name: "read_output", InputSchema: json.RawMessage(mcpOutputSchema),
				Description: "Read a stored tool output by its key (from a [CCM_CACHED] stub or a capture), whole or by lines.",
				Call: func(ctx context.Context, args json.RawMessage) (string, error) {
					var in mcpOutputIn
					if err := mcpserve.Args(args, &in); err != nil {
						return "", err
					}
					return readOutput(ctx, g, in)
				}},
		}}
}

func mcpSearch(ctx context.Context, g globalOptions, in mcpSearchIn) (string, error) {
	o := searchOptions{globalOptions: g, Regex: in.Regex, Select: sessions.Selector{Project: in.Project, Session: in.Session}, Since: in.Since,
		In: in.In, Tool: in.Tool, Archived: in.Archived, Limit: in.Limit, Sort: "time", Now: time.Now()}
	if o.Limit == 0 {
		o.Limit = 20
	}
	o.Args = []string{in.Query}
	if !in.Regex && !strings.Contains(in.Query, `"`) {
		o.Args = strings.Fields(in.Query)
	}
	q, err := buildQuery(o, maintainConfig(g).String("CCM_SEARCH_REDACT"))
	if err != nil {
		return "", err
	}
	src := searchSources(ctx, g, q.Redact)
	var res *search.Result
	err = withIndex(ctx, g, src, false, 0, nil, func(ix *search.Index, _ search.UpdateStats) (err error) {
		res, err = ix.Search(ctx, q, src.Resolve)
		return err
	})
	if err != nil {
		return "", err
	}
	if res.Hits == nil {
		res.Hits = []search.Hit{}
	}
	return toJSON(res)
}

func mcpPage(ctx context.Context, g globalOptions, in mcpPageIn) (string, error) {
	if in.Count <= 0 {
		in.Count = 20
	}
	redact, err := search.ParseRedact(maintainConfig(g).String("CCM_SEARCH_REDACT"))
	if err != nil {
		return "", err
	}
	src := searchSources(ctx, g, redact)
	var pg *search.Page
	err = withIndex(ctx, g, src, false, 0, nil, func(ix *search.Index, _ search.UpdateStats) (err error) {
		pg, err = ix.ReadPage(ctx, in.Session, in.Agent, in.Line, min(in.Count, 200), src.Resolve, redact)
		return err
	})
	if err != nil {
		return "", err
	}
	return toJSON(pg)
}

// readOutput reads stored content as text and selects its lines as
// ccm cache get does.
func readOutput(ctx context.Context, g globalOptions, in mcpOutputIn) (string, error) {
	key, err := ccm.ParseKey(strings.TrimSpace(in.Key))
	if err != nil {
		return "", err
	}
	st, err := openStore(g)
	if err != nil {
		return "", err
	}
	content, err := st.Get(ctx, key)
	if err != nil {
		return "", err
	}
	content = searchtext.StoredText(content)
	sel, err := parseLineSelect(in.Lines, in.Grep, in.Head, in.Tail, in.Head != 0, in.Tail != 0)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if sel.active() {
		if err := sel.write(&out, bytes.NewReader(content)); err != nil {
			if _, ok := err.(silentError); ok {
				return "(no line matches)", nil
			}
			return "", err
		}
	} else {
		out.Write(content)
	}
	if out.Len() > mcpMaxOutput {
		n := bytes.Count(content, []byte{'\n'})
		return fmt.Sprintf("%s\n[… cut at %d bytes of %d; the content has %d lines: ask for lines A:B]", out.Bytes()[:mcpMaxOutput], mcpMaxOutput, out.Len(), n), nil
	}
	return out.String(), nil
}

func toJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}
