// Registrations: this file says which hooks ccm registers for which
// features (events, tool matchers, timeouts) and how the command that runs
// one is written and recognised again in a settings file.

package install

import (
	"path/filepath"
	"slices"
	"strings"
)

// Registration is one hook ccm registers.
type Registration struct {
	Event   string
	Matcher string // "" for events without matchers
	Timeout int    // seconds
}

// Matchers of the tool events, as narrow as each feature allows: every
// matching registration is one process start per tool call and writes
// progress records into the transcript (agentihooks' unmatched
// registrations cost two Python starts per tool call).
const (
	// CaptureMatcher: the tools whose output shape ccm knows, and MCP
	// tools (whose error results the tool memory records).
	CaptureMatcher = "^(Bash|Glob|Grep|Read|WebFetch|mcp__.*)$"
	// MemoryPostMatcher: without capture, only MCP tools report errors
	// through PostToolUse; the others fire PostToolUseFailure.
	MemoryPostMatcher = "^mcp__.*"
	// SubagentMatcher: the opus note before a subagent starts.
	SubagentMatcher = "Agent|Task"
	// MemoryPreMatcher: the tools whose lessons are shown before they run
	// (the subagent tools included, for the opus note).
	MemoryPreMatcher = "^(Agent|Task|Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|WebFetch|WebSearch|mcp__.*)$"
)

// Events are every event ccm may register, in the order it registers them.
var Events = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "PreCompact", "SessionEnd"}

// ColdTaskTools are the tools after which the cold-task check may run: the
// ones that finish work (claude-agentic-framework's Bash|Write|Edit, and the task
// tools whose updates complete a task).
var ColdTaskTools = []string{"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "TaskUpdate", "TodoWrite"}

// captureTools are the tools of CaptureMatcher, without the MCP pattern.
var captureTools = []string{"Bash", "Glob", "Grep", "Read", "WebFetch"}

// Features selects the optional registrations.
type Features struct {
	NoCapture bool // leave out the PostToolUse capture
	NoMemory  bool // leave out the tool memory
	// NoMonitor leaves out the context monitor and audit (Stop).
	NoMonitor bool
	// NoPreserve leaves out the pre-compact preservation (PreCompact; the
	// SessionStart compact registration stays for the effort policy).
	NoPreserve bool
	// NoColdTasks leaves out the cold-task summaries (PostToolUse).
	NoColdTasks bool
}

// RegistrationsFor returns ccm's hooks for a feature set, one per event:
// ccm dispatches every feature of an event from one process, so two
// handlers would run it twice.
//   - SessionStart: effort policy, state sweeps and, after a compaction,
//     the preserved working state; resume and fork are left out because
//     their context is replayed from the transcript.
//   - UserPromptSubmit: context refresh, pin directives, the context
//     monitor's warning for the model (no matcher exists for it).
//   - PreToolUse: the opus note on Agent and Task; with the tool memory,
//     the lessons before the tools that can fail.
//   - PostToolUse: capture of large outputs; with the tool memory, MCP
//     error results; with cold tasks, the tools that finish work.
//   - PostToolUseFailure (tool memory): every failed call; it runs only
//     when a tool fails.
//   - Stop (tool memory, context monitor): the scan for MCP errors of the
//     turn; the context fill and audit.
//   - PreCompact (preservation): saves the working state.
//   - SessionEnd: removes the session's state.
func RegistrationsFor(f Features) []Registration {
	pre := SubagentMatcher
	if !f.NoMemory {
		pre = MemoryPreMatcher
	}
	regs := []Registration{{"SessionStart", "startup|clear|compact", 10}, {"UserPromptSubmit", "", 10}, {"PreToolUse", pre, 10}}
	if post := postMatcher(f); post != "" {
		regs = append(regs, Registration{"PostToolUse", post, 10})
	}
	if !f.NoMemory {
		regs = append(regs, Registration{"PostToolUseFailure", "", 10})
	}
	if !f.NoMemory || !f.NoMonitor {
		regs = append(regs, Registration{"Stop", "", 10})
	}
	if !f.NoPreserve {
		regs = append(regs, Registration{"PreCompact", "", 15})
	}
	return append(regs, Registration{"SessionEnd", "", 5})
}

// postMatcher is the PostToolUse matcher of a feature set, "" for none:
// the capture's tools, the cold-task check's, and MCP tools for the
// capture or the tool memory. It equals CaptureMatcher or
// MemoryPostMatcher when cold tasks are left out.
func postMatcher(f Features) string {
	var tools []string
	if !f.NoCapture {
		tools = append(tools, captureTools...)
	}
	if !f.NoColdTasks {
		for _, t := range ColdTaskTools {
			if !slices.Contains(tools, t) {
				tools = append(tools, t)
			}
		}
	}
	mcp := !f.NoCapture || !f.NoMemory
	switch {
	case len(tools) == 0 && mcp:
		return MemoryPostMatcher
	case len(tools) == 0:
		return ""
	case mcp:
		tools = append(tools, "mcp__.*")
	}
	return "^(" + strings.Join(tools, "|") + ")$"
}

// Registrations are ccm's hooks with every feature. A function, not a
// variable built at start-up: every `ccm hook` process would build it.
func Registrations() []Registration { return RegistrationsFor(Features{}) }

// HookCommand is the command line registered for event.
func HookCommand(exe, event string) string { return ShellQuote(exe) + " hook " + event }

// ShellQuote quotes s for sh when it holds anything beyond a safe set. A
// path relative to the project, "$CLAUDE_PROJECT_DIR/...", is already in
// shell syntax and kept as it is.
func ShellQuote(s string) string {
	if strings.HasPrefix(s, `"$CLAUDE_PROJECT_DIR/`) && strings.HasSuffix(s, `"`) {
		return s
	}
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./-+=:,@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ccmEvent returns the event of a command that runs a ccm hook ("ccm hook
// X", "'/path/to/ccm' hook X"), or false. names are the executable names
// that count as ccm.
func ccmEvent(cmd string, names ...string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	var exe, rest string
	if cmd != "" && (cmd[0] == '\'' || cmd[0] == '"') {
		end := strings.IndexByte(cmd[1:], cmd[0])
		if end < 0 {
			return "", false
		}
		exe, rest = cmd[1:end+1], cmd[end+2:]
	} else {
		exe, rest, _ = strings.Cut(cmd, " ")
	}
	base := filepath.Base(exe)
	ok := base == "ccm"
	for _, n := range names {
		ok = ok || base == n
	}
	f := strings.Fields(rest)
	if !ok || len(f) != 2 || f[0] != "hook" {
		return "", false
	}
	return f[1], true
}
