// Package audit measures what tool outputs put into a session's context:
// bytes and estimated tokens per tool, and for Bash per command and for MCP
// tools per server, since the last compact boundary (what came before it
// is no longer in the context). It also estimates what `ccm purge` would
// save by stubbing the large outputs. An Audit is kept incrementally: the
// Stop hook feeds it the records appended since its last read, and saves
// it with the offset it reached.
package audit

import (
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/transcript"
	"ccm/transcript/worklog"
)

// Caps that keep a saved Audit small.
const (
	maxConsumers = 100
	maxPending   = 256
)

// PurgeThreshold, RecentPrompts and StubBytes mirror ccm purge's
// defaults: before the last two prompts (--recent-turns 2), tool outputs
// over 1,000 bytes (--old-threshold) move to the store and a stub of 200
// to 400 bytes takes their place. The estimate counts only those, with
// the largest stub: a purge also bounds the window by the last ten tool
// results and stubs stale reads and duplicates, so it saves at least this.
const (
	PurgeThreshold = 1000
	RecentPrompts  = 2
	StubBytes      = 400
)

// BytesPerToken is the estimate's ratio (cl100k averages about 4 bytes a
// token on English and code).
const BytesPerToken = 4

// Consumer is one tool (or command, or MCP server) and what its outputs
// put into the context.
type Consumer struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// Tokens is the estimated token count of the consumer's outputs.
func (c Consumer) Tokens() int64 { return c.Bytes / BytesPerToken }

// Audit is the running account of one session.
type Audit struct {
	Consumers map[string]*Consumer `json:"consumers,omitempty"`
	Total     int64                `json:"total"`
	// Purgeable counts the outputs over PurgeThreshold before the last
	// RecentPrompts prompts: bytes a purge would remove (stub size
	// deducted) and how many.
	Purgeable      int64 `json:"purgeable"`
	PurgeableCount int   `json:"purgeable_count"`
	// Recent holds, for each of the last RecentPrompts prompts, what the
	// outputs since it would save once they are before the window.
	Recent []Saving `json:"recent,omitempty"`
	// Offset is how far the transcript was read; Path names it (for the
	// caller: an offset into another file means nothing).
	Offset int64  `json:"offset"`
	Path   string `json:"path,omitempty"`
	// Started is set once the first read placed Offset.
	Started bool `json:"started,omitempty"`
	// Partial is set when part of the context was not read (a session
	// first audited past TailLimit of new bytes).
	Partial bool `json:"partial,omitempty"`
	// Pending maps tool_use ids to their consumer key until the result
	// comes.
	Pending map[string]string `json:"pending,omitempty"`
}

// Saving is what the outputs after one prompt would save in a purge.
type Saving struct {
	Bytes int64 `json:"bytes"`
	Count int   `json:"count"`
}

// New returns an empty Audit.
func New() *Audit { return &Audit{Consumers: map[string]*Consumer{}, Pending: map[string]string{}} }

// Reset forgets everything counted (at a compact boundary).
func (a *Audit) Reset() {
	*a = Audit{Consumers: map[string]*Consumer{}, Pending: map[string]string{}, Offset: a.Offset, Started: a.Started, Path: a.Path}
}

// Add takes one record.
func (a *Audit) Add(rec transcript.Record) {
	if a.Consumers == nil {
		a.Consumers = map[string]*Consumer{}
	}
	if a.Pending == nil {
		a.Pending = map[string]string{}
	}
	// One walk for the three (an assistant record keeps "type" after
	// "message"); a message's content is then crossed once, by Blocks.
	var top [3]gjson.Result
	rec.MembersOpen(worklog.TopKeys, top[:])
	if gjson.Parse(top[0].Raw).Bool() {
		return
	}
	switch gjson.Parse(top[1].Raw).Str {
	case "system":
		if rec.Field("subtype").Str == "compact_boundary" {
			a.Reset()
		}
	case "assistant":
		worklog.Blocks(worklog.Content(top[2]), func(b gjson.Result) bool {
			if transcript.Field(b.Raw, "type").Str == "tool_use" {
				if len(a.Pending) >= maxPending {
					clear(a.Pending)
				}
				a.Pending[strings.Clone(transcript.Field(b.Raw, "id").Str)] = Key(transcript.Field(b.Raw, "name").Str, transcript.Lookup(b.Raw, "input"))
			}
			return true
		})
	case "user":
		c := worklog.Content(top[2])
		if isPrompt(rec, c) {
			a.Recent = append(a.Recent, Saving{})
			if len(a.Recent) > RecentPrompts {
				// The oldest prompt's outputs are now before the window.
				a.Purgeable += a.Recent[0].Bytes
				a.PurgeableCount += a.Recent[0].Count
				a.Recent = append(a.Recent[:0], a.Recent[1:]...)
			}
		}
		worklog.Blocks(c, func(b gjson.Result) bool {
			if transcript.Field(b.Raw, "type").Str != "tool_result" {
				return true
			}
			id := transcript.Field(b.Raw, "tool_use_id").Str
			key, ok := a.Pending[id]
			if !ok {
				key = "(tool not seen)"
			}
			delete(a.Pending, id)
			a.add(key, resultBytes(transcript.Lookup(b.Raw, "content")))
			return true
		})
	}
}

func (a *Audit) add(key string, n int64) {
	c := a.Consumers[key]
	if c == nil {
		if len(a.Consumers) >= maxConsumers {
			key = "(other)"
			c = a.Consumers[key]
		}
		if c == nil {
			c = &Consumer{Key: key}
			a.Consumers[key] = c
		}
	}
	c.Count++
	c.Bytes += n
	a.Total += n
	if n > PurgeThreshold {
		if k := len(a.Recent); k > 0 {
			a.Recent[k-1].Bytes += n - StubBytes
			a.Recent[k-1].Count++
		} else {
			a.Purgeable += n - StubBytes
			a.PurgeableCount++
		}
	}
}

// isPrompt reports a prompt the user typed: text, not only tool results,
// not the client's meta records or compaction summary.
func isPrompt(rec transcript.Record, c gjson.Result) bool {
	// Content first: most user records are tool results, and a lookup of
	// a key they lack (isMeta) scans the whole line.
	text, onlyResults := worklog.ContentText(c)
	if onlyResults || !worklog.IsPromptText(text) {
		return false
	}
	return !rec.Field("isMeta").Bool() && !rec.IsCompactSummary()
}

// resultBytes is the size of a tool_result's content as the request
// carries it: the text's JSON string (escapes included, quotes not), images
// at their base64 size. Taking the raw length spares decoding every output.
// c comes from transcript.Lookup: its values are crossed, not decoded.
func resultBytes(c gjson.Result) int64 {
	str := func(r gjson.Result) int64 { return int64(max(len(r.Raw)-2, 0)) }
	if c.Type == gjson.String {
		return str(c)
	}
	var n int64
	worklog.Blocks(c, func(b gjson.Result) bool {
		switch transcript.Field(b.Raw, "type").Str {
		case "text":
			n += str(transcript.Lookup(b.Raw, "text"))
		case "image":
			n += str(transcript.Lookup(b.Raw, "source.data"))
		default:
			n += int64(len(b.Raw))
		}
		return true
	})
	return n
}

// multiword are commands whose second word says what they did.
var multiword = map[string]bool{"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "cargo": true,
	"docker": true, "kubectl": true, "mix": true, "make": true, "python": true, "python3": true, "uv": true, "gh": true, "bun": true}

// Key names the consumer of a tool call: the tool; for Bash the command
// (its first word, two for git, go, npm and the like); for an MCP tool
// (mcp__server__tool) the server.
func Key(name string, input gjson.Result) string {
	switch {
	case name == "Bash":
		f := strings.Fields(input.Get("command").Str)
		// Skip leading variable assignments and cd ... &&.
		for len(f) > 0 && strings.Contains(f[0], "=") {
			f = f[1:]
		}
		if len(f) >= 3 && f[0] == "cd" && (f[2] == "&&" || f[2] == ";") {
			f = f[3:]
		}
		switch {
		case len(f) == 0:
			return "Bash"
		case len(f) > 1 && multiword[f[0]] && !strings.HasPrefix(f[1], "-"):
			return "Bash " + cutKey(f[0]+" "+f[1])
		}
		return "Bash " + cutKey(f[0])
	case strings.HasPrefix(name, "mcp__"):
		server, _, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		return "MCP " + cutKey(server)
	}
	return cutKey(name)
}

func cutKey(s string) string {
	if len(s) > 60 {
		s = s[:60]
	}
	return strings.Clone(s)
}

// Top returns the n largest consumers, largest first.
func (a *Audit) Top(n int) []Consumer {
	out := make([]Consumer, 0, len(a.Consumers))
	for _, c := range a.Consumers {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Key < out[j].Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
