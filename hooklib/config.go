package hooklib

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"ccm/hooklib/compress"
	"ccm/internal/fsutil"
)

// Var describes one configuration variable.
type Var struct {
	Name    string
	Default string // "" for none; paths are resolved by defaultFor
	Kind    string // bool, int, number, path, regexp, or the choices separated by |
	Help    string
}

// Vars lists every variable ccm's hooks read, in the order `ccm config`
// prints them. Names and defaults are agentihooks' (docs/earlier-tools.md),
// except that paths under ~/.claude follow
// CLAUDE_CONFIG_DIR and ccm keeps its own files under CCM_HOME.
var Vars = []Var{
	{"CCM_HOME", "", "path", "ccm's state, logs, caches and config.env (default <claude config dir>/ccm)"},
	{"CCM_HOOKS_DISABLED", "false", "bool", "make every ccm hook a no-op"},
	{"CLAUDE_HOOKS_PASSTHROUGH", "false", "bool", "the earlier name of CCM_HOOKS_DISABLED"},
	{"CLAUDE_HOOK_LOG_ENABLED", "true", "bool", "log hook errors and refreshes"},
	{"CLAUDE_HOOK_LOG_FILE", "", "path", "hook log (default <ccm home>/logs/hooks.log, capped at 1 MiB)"},
	{"CONTEXT_REFRESH_ENABLED", "true", "bool", "re-inject rules and CLAUDE.md every N prompts"},
	{"CONTEXT_REFRESH_INTERVAL", "20", "int", "rules every N prompts; 0 disables"},
	{"CONTEXT_REFRESH_CLAUDE_MD_INTERVAL", "40", "int", "CLAUDE.md every N prompts; 0 disables"},
	{"CONTEXT_REFRESH_RULES_DIR", "", "path", "global rules (default <claude config dir>/rules)"},
	{"CONTEXT_REFRESH_INCLUDE_PROJECT", "true", "bool", "also the project's .claude/rules"},
	{"CONTEXT_REFRESH_MAX_CHARS", "8000", "int", "budget per refresh part, capped so the whole output stays within 10,000"},
	{"CONTEXT_REFRESH_COMPRESSION", "standard", "off|light|standard|aggressive", "compression level of refreshed text"},
	{"CONTEXT_COMPRESSION_SCOPE", "refresh", "refresh|all", "refresh, or all to compress every ccm injection"},
	{"CONTEXT_REFRESH_ABBREV_FILE", "", "path", "JSON {\"entries\":{...}} merged over the built-in abbreviations"},
	{"EFFORT_POLICY_ENABLED", "true", "bool", "effort guidance on SessionStart, opus note before subagents"},
	{"DEFAULT_EFFORT", "medium", "low|medium|high", "effort profile"},
	{"THINKING_BUDGET_TOKENS", "0", "int", "advisory thinking budget per response; 0 for none"},
	{"CCM_CAPTURE_ENABLED", "true", "bool", "PostToolUse: keep large tool outputs in the CCM store, give the model a preview and stub"},
	{"BASH_THRESHOLD", "2000", "int", "capture Bash outputs over N bytes; 0 disables"},
	{"GLOB_THRESHOLD", "2000", "int", "capture Glob results over N bytes; 0 disables"},
	{"GREP_THRESHOLD", "2000", "int", "capture Grep results over N bytes; 0 disables"},
	{"READ_THRESHOLD", "25000", "int", "capture Read file contents over N bytes; 0 disables"},
	{"CCM_CAPTURE_THRESHOLD", "10000", "int", "capture other tools' outputs over N bytes; 0 disables"},
	{"CCM_CAPTURE_PIN_DEFAULT", "none", "none|soft|hard", "pin level of captured outputs without a ccm:pin directive"},
	{"CCM_CACHE_DIR", "", "path", "the CCM store (default <claude config dir>/cache/ccm)"},
	{"CCM_TOOL_MEMORY_ENABLED", "true", "bool", "remember failed tool calls; show the lessons before the tool runs again"},
	{"AGENTICORE_TOOL_MEMORY_PATH", "", "path", "tool memory store, NDJSON (default <ccm home>/tool-memory.ndjson)"},
	{"AGENTICORE_TOOL_MEMORY_MAX", "100", "int", "lessons kept; the oldest go first"},
	{"AGENTICORE_TOOL_MEMORY_SHOW", "15", "int", "lessons shown before one tool call at most"},
	// ccm maintain (cron): archive, clean, prune.
	{"CCM_MAINTAIN_ARCHIVE", "true", "bool", "ccm maintain archives old sessions"},
	{"CCM_ARCHIVE_OLDER_THAN_DAYS", "", "number", "archive sessions not written for N days (default: below cleanupPeriodDays)"},
	{"CCM_ARCHIVE_MIN_SIZE_MB", "0", "number", "archive only sessions of at least N MB"},
	{"CCM_ARCHIVE_DIR", "", "path", "where archives go (default <ccm home>/archive)"},
	{"CCM_MAINTAIN_CLEAN", "true", "bool", "ccm maintain removes old purge backups, temp files and orphaned folders"},
	{"CCM_CLEAN_BACKUPS_OLDER_THAN_DAYS", "7", "number", "remove purge backups older than N days"},
	{"CCM_CLEAN_KEEP_BACKUPS", "0", "int", "keep at most N purge backups per transcript; 0 for no count limit"},
	{"CCM_CLEAN_EMPTY", "false", "bool", "also remove empty and zero-byte sessions"},
	{"CCM_PRUNE_MAX_SIZE_MB", "500", "number", "ccm maintain prunes the CCM store to N MB; empty to skip"},
	{"CCM_PRUNE_MAX_AGE_DAYS", "30", "number", "ccm maintain prunes blobs not accessed for N days; empty to skip"},
	// ccm search.
	{"CCM_SEARCH_REDACT", "", "regexp", "ccm search keeps text this regular expression matches out of its index (alternatives with |)"},
	// Object storage: export, import and remote archives (docs/remote.md).
	{"CCM_ARCHIVE_TO", "", "text", "ccm maintain archives to this s3://BUCKET/PREFIX instead of the archive folder"},
	{"CCM_S3_ENDPOINT", "", "text", "the S3-compatible server of s3:// URLs (http://127.0.0.1:9000, https://ACCOUNT.r2.cloudflarestorage.com); default AWS S3"},
	{"CCM_MACHINE", "", "text", "the name this machine's archives and exports go under in object storage (default: the host name)"},
	{"CCM_REDACT_FILE", "", "path", "the patterns ccm export --redact replaces, one regular expression a line (default <ccm home>/redact.txt)"},
	// claude-context-manager's settings (its config.py and environment).
	{"CCM_ENABLED", "true", "bool", "claude-context-manager's switch: false makes every ccm hook a no-op"},
	{"CCM_DEFAULT_PIN_LEVEL", "none", "none|soft|hard", "pin level of captures and purge stubs no ccm:pin directive covers, below CCM_CAPTURE_PIN_DEFAULT and --pin-level-default (claude-context-manager's default: soft)"},
	{"CCM_STUB_THRESHOLD_BYTES", "5000", "int", "ccm purge --threshold when not given"},
	{"CCM_RECENT_LINES_WINDOW", "", "number", "ccm purge --recent-lines when neither it nor --recent-turns is given (N lines read as (N+9)/10 turns)"},
	{"AGENTIHOOKS_HOME", "", "path", "agentihooks' folder, whose .env and *.env are read below config.env (default ~/.agentihooks)"},
}

// Value is a variable's effective value and where it came from.
type Value struct {
	Value  string
	Source string // "env", "config.env", an earlier tool's file (~/.agentihooks/.env) or "default"
}

// IsSet reports whether the value was given somewhere, not defaulted.
func (v Value) IsSet() bool { return v.Source != "default" && v.Source != "" }

// Config is the effective configuration of one hook run.
type Config struct {
	ClaudeDir string
	Home      string // ccm home
	File      string // <ccm home>/config.env
	values    map[string]Value
	// Warnings lists values that were invalid and replaced by defaults,
	// and a config.env that could not be read.
	Warnings []string
	// Legacy are the earlier tools' configuration files that exist; the
	// values they set that ccm does not read are in Unused.
	Legacy []LegacyFile
	Unused []string // "NAME (~/.agentihooks/.env)"
}

// LoadConfig resolves the configuration: the process environment (lookup)
// wins over <ccm home>/config.env, which wins over the earlier tools' files
// (LegacyFiles), which win over the defaults.
func LoadConfig(claudeDir string, lookup func(string) (string, bool)) *Config {
	c := &Config{ClaudeDir: claudeDir, values: make(map[string]Value, len(Vars))}
	if v, ok := lookup("CCM_HOME"); ok && v != "" {
		c.Home, c.values["CCM_HOME"] = expandHome(v), Value{v, "env"}
	} else {
		c.Home = filepath.Join(claudeDir, "ccm")
		c.values["CCM_HOME"] = Value{c.Home, "default"}
	}
	c.File = filepath.Join(c.Home, "config.env")
	file, err := readEnvFile(c.File)
	if err != nil && !os.IsNotExist(err) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("config.env: %v", err))
	}
	c.Legacy = LegacyFiles(claudeDir, lookup)
	known := make(map[string]bool, len(Vars))
	for _, v := range Vars {
		known[v.Name] = true
	}
	for _, v := range Vars[1:] {
		if s, ok := lookup(v.Name); ok {
			c.values[v.Name] = Value{s, "env"}
		} else if s, ok := file[v.Name]; ok {
			c.values[v.Name] = Value{s, "config.env"}
		} else {
			c.values[v.Name] = Value{c.defaultFor(v), "default"}
			for _, f := range c.Legacy {
				if s, ok := f.Values[v.Name]; ok {
					c.values[v.Name] = Value{s, f.Label}
					break
				}
			}
		}
	}
	for _, f := range c.Legacy {
		for _, n := range f.Order {
			if !known[n] {
				c.Unused = append(c.Unused, n+" ("+f.Label+")")
			}
		}
	}
	return c
}

func (c *Config) defaultFor(v Var) string {
	switch v.Name {
	case "CLAUDE_HOOK_LOG_FILE":
		return filepath.Join(c.Home, "logs", "hooks.log")
	case "CONTEXT_REFRESH_RULES_DIR":
		return filepath.Join(c.ClaudeDir, "rules")
	case "CCM_CACHE_DIR":
		return filepath.Join(c.ClaudeDir, "cache", "ccm")
	case "AGENTICORE_TOOL_MEMORY_PATH":
		return filepath.Join(c.Home, "tool-memory.ndjson")
	}
	return v.Default
}

// Lookup returns a variable's value and source.
func (c *Config) Lookup(name string) Value { return c.values[name] }

// String returns a variable's value.
func (c *Config) String(name string) string { return c.values[name].Value }

// Path returns a variable's value with a leading ~/ expanded.
func (c *Config) Path(name string) string { return expandHome(c.values[name].Value) }

// Bool parses a boolean (1/0, true/false, yes/no, on/off). An invalid value
// means the default, and a warning.
func (c *Config) Bool(name string) bool {
	switch strings.ToLower(strings.TrimSpace(c.values[name].Value)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off", "":
		return false
	}
	return c.invalid(name, "a boolean") == "true"
}

// Int parses a non-negative integer. An invalid or negative value means
// the default, and a warning.
func (c *Config) Int(name string) int {
	s := strings.TrimSpace(c.values[name].Value)
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n
	}
	n, _ := strconv.Atoi(c.invalid(name, "a non-negative integer"))
	return n
}

// Number parses a non-negative decimal number; "" is -1 (not set). An
// invalid value means the default, and a warning.
func (c *Config) Number(name string) float64 {
	s := strings.TrimSpace(c.values[name].Value)
	if s == "" {
		return -1
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f < 1e12 {
		return f
	}
	d := c.invalid(name, "a non-negative number")
	if f, err := strconv.ParseFloat(d, 64); err == nil {
		return f
	}
	return -1
}

// Choice returns a value that must be one of choices (case-insensitive);
// anything else means the default, and a warning.
func (c *Config) Choice(name string, choices ...string) string {
	s := strings.ToLower(strings.TrimSpace(c.values[name].Value))
	for _, ch := range choices {
		if s == ch {
			return s
		}
	}
	return c.invalid(name, strings.Join(choices, ", "))
}

func (c *Config) invalid(name, want string) string {
	def := ""
	for _, v := range Vars {
		if v.Name == name {
			def = c.defaultFor(v)
		}
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s=%q is not %s; using %q", name, c.values[name].Value, want, def))
	return def
}

// Validate parses every variable by its kind, so Warnings lists every
// invalid value.
func (c *Config) Validate() {
	for _, v := range Vars {
		switch v.Kind {
		case "bool":
			c.Bool(v.Name)
		case "int":
			c.Int(v.Name)
		case "path", "list", "text":
		case "regexp":
			if r := c.String(v.Name); r != "" {
				if _, err := regexp.Compile(r); err != nil {
					c.Warnings = append(c.Warnings, fmt.Sprintf("%s=%q is not a regular expression: %v", v.Name, r, err))
				}
			}
		case "number":
			c.Number(v.Name)
		case "off|light|standard|aggressive":
			if _, ok := compress.ParseLevel(c.String(v.Name)); !ok {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s=%q is not off, light, standard, aggressive or 0-3; compression off", v.Name, c.String(v.Name)))
			}
		default:
			c.Choice(v.Name, strings.Split(v.Kind, "|")...)
		}
	}
}

// Disabled reports whether CCM_HOOKS_DISABLED or CLAUDE_HOOKS_PASSTHROUGH
// is set to a true value, or CCM_ENABLED to a false one.
func (c *Config) Disabled() bool {
	return c.Bool("CCM_HOOKS_DISABLED") || c.Bool("CLAUDE_HOOKS_PASSTHROUGH") || !c.Bool("CCM_ENABLED")
}

// PinDefault is the pin level of content no ccm:pin directive covers: the
// first of specific (CCM_CAPTURE_PIN_DEFAULT for the capture) that is set
// anywhere, then CCM_DEFAULT_PIN_LEVEL, claude-context-manager's name.
func (c *Config) PinDefault(specific string) string {
	name := "CCM_DEFAULT_PIN_LEVEL"
	if specific != "" && c.values[specific].IsSet() {
		name = specific
	}
	return c.Choice(name, "none", "soft", "hard")
}

// DisabledByEnv is the fast check done before anything else: it looks at the
// process environment only.
func DisabledByEnv(lookup func(string) (string, bool)) bool {
	for _, name := range []string{"CCM_HOOKS_DISABLED", "CLAUDE_HOOKS_PASSTHROUGH"} {
		if v, ok := lookup(name); ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "1", "true", "yes", "on":
				return true
			}
		}
	}
	if v, ok := lookup("CCM_ENABLED"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "0", "false", "no", "off":
			return true
		}
	}
	return false
}

// readEnvFile parses KEY=VALUE lines: blank lines and # comments are
// skipped, "export " is allowed, and one level of matching quotes is
// removed. It is the .env dialect the earlier tools read.
func readEnvFile(path string) (map[string]string, error) {
	data, err := fsutil.ReadRegular(path, maxReadFile)
	if err != nil {
		return nil, err
	}
	m, _ := parseEnv(data)
	return m, nil
}

// envLine reads one KEY=VALUE line: blank lines and # comments are
// skipped, "export " is allowed, and one level of matching quotes is
// removed.
func envLine(line string) (k, v string, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", "", false
	}
	line = strings.TrimPrefix(line, "export ")
	k, v, ok = strings.Cut(line, "=")
	if !ok {
		return "", "", false
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	} else if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return k, v, true
}

// expandHome expands a leading ~/ (config.env values are not seen by a
// shell).
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
