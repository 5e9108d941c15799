// Package capture decides which tool outputs a PostToolUse hook keeps out
// of the model's context, and builds the replacement Claude Code accepts.
//
// Claude Code 2.1.330 lets a PostToolUse hook replace a tool's output after
// the tool ran (hookSpecificOutput.updatedToolOutput), as long as the
// replacement has the tool's own output shape: a Read output that is not
// Read's shape is rejected and the original goes through
// (docs/hooks-protocol.md, "Replacing a tool's output"). So the tool runs
// once, where Claude Code runs it, and only its result is swapped:
// claude-context-manager's intercept hooks ran every command a second time,
// in the wrong directory (docs/earlier-tools.md).
//
// Decide looks at one call (tool name, tool_input, tool_response) and
// returns what to store, or why the output passes through untouched.
// Capture.Replace then builds the tool_response with its large field
// replaced by a head and tail preview and the [CCM_CACHED] stub. Only
// shapes verified with the real client are captured; any other tool, or a
// response whose shape is not the one expected, passes through.
package capture

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// Thresholds are the output sizes, in bytes, above which a tool's output
// is captured. The names and defaults are claude-context-manager's
// (BASH_THRESHOLD, GLOB_THRESHOLD, GREP_THRESHOLD, READ_THRESHOLD); Other
// applies to every other tool ccm knows the shape of.
type Thresholds struct {
	Bash, Glob, Grep, Read, Other int
}

// DefaultThresholds are claude-context-manager's v1.0 values and 10,000 bytes
// for the rest.
var DefaultThresholds = Thresholds{Bash: 2000, Glob: 2000, Grep: 2000, Read: 25000, Other: 10000}

// For returns the threshold of a tool.
func (t Thresholds) For(tool string) int {
	switch tool {
	case "Bash":
		return t.Bash
	case "Glob":
		return t.Glob
	case "Grep":
		return t.Grep
	case "Read":
		return t.Read
	}
	return t.Other
}

// Call is one finished tool call as the PostToolUse hook sees it.
type Call struct {
	Tool     string
	Input    gjson.Result // tool_input
	Response gjson.Result // tool_response
	// AgentID is set when a subagent made the call (agent_id in the hook
	// input; observed with Claude Code 2.1.330): subagents get full content.
	AgentID string
	// TranscriptPath is the session's transcript; the client keeps
	// outputs it cut under <transcript without .jsonl>/tool-results/.
	TranscriptPath string
}

// Capture is an output to store and replace.
type Capture struct {
	Tool    string
	Content []byte // the field's value as the model would have read it
	// Source describes the call for the stub and the store's metadata
	// ("Bash go test ./...", "Read /src/x.go").
	Source  string
	Command string // Bash command
	File    string // Read's file_path
	Pattern string // Glob or Grep pattern; for stats: the command pattern
	Stat    string // what statistics group the capture under
	field   field
	resp    gjson.Result
}

// Skip reasons, for the log and the tests.
const (
	SkipSubagent  = "subagent call"
	SkipUnknown   = "tool shape not verified"
	SkipShape     = "unexpected output shape"
	SkipSmall     = "under threshold"
	SkipBypass    = "file on the bypass list"
	SkipPaging    = "Read with offset or limit"
	SkipTrivial   = "trivial command"
	SkipCCM       = "ccm's own command"
	SkipNotText   = "not a text file"
	SkipThreshold = "threshold 0 disables capture"
)

// Decide returns the capture for a call, or nil and the reason it passes
// through.
func Decide(c Call, t Thresholds) (*Capture, string) {
	if c.AgentID != "" {
		return nil, SkipSubagent
	}
	sh, ok := shapes[c.Tool]
	if !ok && strings.HasPrefix(c.Tool, "mcp__") {
		sh, ok = mcpShape, true
	}
	if !ok {
		return nil, SkipUnknown
	}
	limit := t.For(c.Tool)
	if limit <= 0 {
		return nil, SkipThreshold
	}
	f, content, ok := sh.pick(c.Response)
	if !ok {
		return nil, SkipShape
	}
	if len(content) <= limit {
		return nil, SkipSmall // checked first: the common case, and not worth a log line
	}
	if why := sh.skip(c); why != "" {
		return nil, why
	}
	if sh.full != nil {
		if whole := sh.full(c, content); whole != nil {
			content = whole
		}
	}
	cp := &Capture{Tool: c.Tool, Content: content, field: f, resp: c.Response}
	sh.describe(c, cp)
	return cp, ""
}

// bypassed reports whether a file is on claude-context-manager's list of files
// that always pass through in full: CLAUDE.md, README*, *.json, *.yaml,
// *.yml, *.toml, *.lock and .env files. ".env" is matched as a name part
// (.env, .env.local, prod.env), not as a substring: app.envoy.py is not an
// env file (claude-context-manager matched a substring).
func bypassed(path string) bool {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	switch {
	case base == "CLAUDE.md", strings.HasPrefix(base, "README"):
		return true
	}
	for _, ext := range []string{".json", ".yaml", ".yml", ".toml", ".lock"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	for _, part := range strings.Split(lower, ".")[1:] {
		if part == "env" {
			return true
		}
	}
	return false
}
