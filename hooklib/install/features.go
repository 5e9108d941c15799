package install

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Feature is a group of hook registrations that `ccm install --no-NAME`
// leaves out.
type Feature struct {
	Name string
	Regs []Registration
	Help string
}

// Features are the optional hook features. Each registration is as narrow
// as the feature allows:
//   - monitor: Stop reads the fill from the transcript's end after each
//     response (the context monitor and the context audit).
//   - preserve: PreCompact saves the working state; SessionStart with
//     source compact (a base registration) injects it.
//   - cold-tasks: PostToolUse on the tools that finish work checks for
//     completed tasks gone cold.
var Features = []Feature{
	{"monitor", []Registration{{"Stop", "", 10}}, "context monitor and audit (Stop)"},
	{"preserve", []Registration{{"PreCompact", "", 15}}, "pre-compact preservation (PreCompact)"},
	{"cold-tasks", []Registration{{"PostToolUse", "TaskUpdate|TodoWrite|Bash|Edit|Write|MultiEdit|NotebookEdit", 10}}, "cold-task summaries (PostToolUse)"},
}

// Selected returns the registrations to install: the base ones and those
// of every feature not in leave, one per event. Registrations of one event
// are combined into one (matchers joined, the longest timeout), because
// ccm dispatches every feature of an event from one process: two handlers
// would run it twice.
func Selected(leave []string) ([]Registration, error) {
	for _, l := range leave {
		if !slices.ContainsFunc(Features, func(f Feature) bool { return f.Name == l }) {
			return nil, fmt.Errorf("unknown feature %q (want %s)", l, FeatureNames())
		}
	}
	all := append([]Registration{}, Registrations...)
	for _, f := range Features {
		if !slices.Contains(leave, f.Name) {
			all = append(all, f.Regs...)
		}
	}
	var out []Registration
	for _, r := range all {
		i := slices.IndexFunc(out, func(o Registration) bool { return o.Event == r.Event })
		if i < 0 {
			out = append(out, r)
			continue
		}
		out[i].Matcher = joinMatchers(out[i].Matcher, r.Matcher)
		out[i].Timeout = max(out[i].Timeout, r.Timeout)
	}
	return out, nil
}

// FeatureNames lists the features for messages.
func FeatureNames() string {
	var names []string
	for _, f := range Features {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// joinMatchers unions two matchers of the form a|b|c; "" matches every
// tool, so it wins.
func joinMatchers(a, b string) string {
	if a == "" || b == "" {
		return ""
	}
	parts := strings.Split(a, "|")
	for _, p := range strings.Split(b, "|") {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "|")
}

// AutocompactVar is the client's variable for the fill at which it
// compacts on its own.
const AutocompactVar = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"

// SetEnv sets env.<key> to the string value in a settings document, editing
// only those bytes. created lists what it added ("env" or "env/<key>");
// prev is the raw previous value when the key existed.
func SetEnv(data []byte, key, value string) (out []byte, created []string, prev string, err error) {
	if err := validObject(data); err != nil {
		return nil, nil, "", err
	}
	st := detectStyle(data)
	top, _ := find(data)
	env, ok := top.member("env")
	if ok && data[env.valStart] != '{' {
		return nil, nil, "", fmt.Errorf("%w: \"env\" is not an object", ErrInvalidSettings)
	}
	if !ok {
		ind := childIndent(data, top, st)
		raw := quote("env") + colon(st) + "{" + nlIndent(st, ind+st.unit) + quote(key) + colon(st) + quote(value) + nlIndent(st, ind) + "}"
		return appendItem(data, top, raw, st), []string{"env"}, "", nil
	}
	ec := parseContainer(data, env.valStart)
	if it, ok := ec.member(key); ok {
		old := string(data[it.valStart:it.end])
		if old == quote(value) {
			return data, nil, "", nil
		}
		return splice(data, it.valStart, it.end, quote(value)), nil, old, nil
	}
	raw := quote(key) + colon(st) + quote(value)
	return appendItem(data, ec, raw, st), []string{"env/" + key}, "", nil
}

// UnsetEnv undoes SetEnv: it removes env.<key> when created says SetEnv
// added it (and env when SetEnv added that), or puts prev back.
func UnsetEnv(data []byte, key string, created []string, prev string) ([]byte, bool) {
	top, _ := find(data)
	env, ok := top.member("env")
	if !ok || data[env.valStart] != '{' {
		return data, false
	}
	ec := parseContainer(data, env.valStart)
	k := slices.IndexFunc(ec.items, func(it item) bool { return it.key == key })
	if k < 0 {
		return data, false
	}
	switch {
	case prev != "":
		it := ec.items[k]
		return splice(data, it.valStart, it.end, prev), true
	case contains(created, "env") && len(ec.items) == 1:
		i := slices.IndexFunc(top.items, func(it item) bool { return it.key == "env" })
		return removeItem(data, top, i), true
	case contains(created, "env/"+key) || contains(created, "env"):
		return removeItem(data, ec, k), true
	}
	return data, false
}

// ParsePct checks an --autocompact value: a percentage 1-100.
func ParsePct(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if err != nil || n < 1 || n > 100 {
		return 0, fmt.Errorf("--autocompact %q is not a percentage from 1 to 100", s)
	}
	return n, nil
}
