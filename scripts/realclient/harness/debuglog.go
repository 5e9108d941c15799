package harness

import (
	"bufio"
	"io"
	"regexp"
	"strings"
)

// HookLog is what the client's debug log says about hooks.
type HookLog struct {
	// Runs counts hook runs per event by exit status: Runs["PreToolUse"]["exit 0"].
	Runs map[string]map[string]int `json:"hook_runs"`
	// ContextAccepted counts, per event, the hook outputs whose
	// additionalContext the client took.
	ContextAccepted map[string]int `json:"context_accepted"`
	// Errors are the hook-related [ERROR] lines (a rejected output, a
	// failed or blocking hook) and the [WARN] lines that report one.
	Errors []string `json:"hook_errors"`
}

// Debug-log lines of Claude Code 2.1.330 (--debug-file):
//
//	... [DEBUG] Hooks: PreToolUse:Bash [cmd] finished with status 0 (57ms)
//	... [DEBUG] SessionEnd:other [cmd] completed with status 0
//	... [DEBUG] Hook PreToolUse (cmd) provided additionalContext (26 chars)
//	... [ERROR] "Hook SessionStart:startup (SessionStart) error: status code 0\n...validation failed..."
var (
	hookRunRE = regexp.MustCompile(`Hooks?: ([A-Za-z]+)(?::\S+)? \[.*?\] (?:finished|completed) with status (-?\d+)`)
	// SessionEnd runs as the client exits and is logged without "Hooks:".
	hookEndRE  = regexp.MustCompile(`\] ([A-Za-z]+)(?::\S+)? \[.*?\] completed with status (-?\d+)`)
	hookCtxRE  = regexp.MustCompile(`Hook ([A-Za-z]+) \(.*?\) provided additionalContext \(\d+ chars\)`)
	hookWarnRE = regexp.MustCompile(`(?i)(validation failed|hook error|failed to run|failed with|blocking error|non-blocking|timed out|is not valid JSON|invalid)`)
)

// ParseDebugLog reads a debug log and collects hook runs, accepted
// additionalContext and hook errors. Lines of any length are read.
func ParseDebugLog(r io.Reader) (HookLog, error) {
	h := HookLog{Runs: map[string]map[string]int{}, ContextAccepted: map[string]int{}, Errors: []string{}}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			h.line(strings.TrimRight(line, "\r\n"))
		}
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return h, err
		}
	}
}

func (h *HookLog) line(line string) {
	m := hookRunRE.FindStringSubmatch(line)
	if m == nil {
		m = hookEndRE.FindStringSubmatch(line)
	}
	if m != nil {
		if h.Runs[m[1]] == nil {
			h.Runs[m[1]] = map[string]int{}
		}
		h.Runs[m[1]]["exit "+m[2]]++
	}
	if m := hookCtxRE.FindStringSubmatch(line); m != nil {
		h.ContextAccepted[m[1]]++
	}
	if !strings.Contains(strings.ToLower(line), "hook") {
		return
	}
	isErr := strings.Contains(line, "[ERROR]")
	isWarn := strings.Contains(line, "[WARN")
	if isErr || (isWarn && hookWarnRE.MatchString(line)) {
		h.Errors = append(h.Errors, cut(strings.TrimSpace(line), 400))
	}
}
