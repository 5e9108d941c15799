// Package migrate moves a Claude Code setup from the earlier tools
// (claude-context-manager, agentihooks, claude-agentic-framework's context
// hooks) to ccm: it finds their hook registrations, configuration and data,
// plans what ccm takes over, imports and leaves, and applies the plan with
// a backup of every file it changes, which Undo puts back byte for byte.
package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"ccm/hooklib"
	"ccm/internal/fsutil"
)

// Tool names.
const (
	CCM        = "claude-context-manager"
	Agentihook = "agentihooks"
	CAF        = "claude-agentic-framework"
)

// Options say where to look.
type Options struct {
	ClaudeDir  string // Claude Code's config dir
	ProjectDir string // the project whose .claude/ settings are looked at
	Home       string // ccm home (config.env, backups, the imports)
	UserHome   string // the user's home folder (~)
	Lookup     func(string) (string, bool)
}

// Handler is one hook registration of an earlier tool in a settings file.
type Handler struct {
	Event   string
	Group   int // index in hooks.<Event>
	Index   int // index in the group's hooks
	Command string
	Tool    string
	Script  string // the script it runs, when one is named
	Missing bool   // that script no longer exists
}

// Settings is one settings file and what the earlier tools registered in it.
type Settings struct {
	Scope    string // user, project or local
	Path     string
	Handlers []Handler
	// Problem says why the file cannot be edited (comments, trailing
	// commas, a BOM, not JSON); Found then lists the earlier tools'
	// commands seen in its text, to be removed by hand.
	Problem string
	Found   []string
}

// Item is one line of the plan.
type Item struct {
	Action string `json:"action"` // take over, import, use in place, leave
	Tool   string `json:"tool"`
	What   string `json:"what"`
}

// Plan is what migrate would do.
type Plan struct {
	Items    []Item
	Settings []Settings
	// Config are config.env lines to add, NAME=value.
	Config []string
	// ToolMemory is the earlier NDJSON store to import into ccm's, if any.
	ToolMemoryFrom, ToolMemoryTo string
	// Summaries are compressed-context summaries to copy into SummaryDir.
	Summaries  []string
	SummaryDir string
	// OldCommands are slash-command files of claude-context-manager that
	// ccm's take the place of (/purge, /ccm, /pin-*).
	OldCommands []string
	// Install are the scopes ccm install registers ccm's hooks in.
	Install map[string]bool
	cfg     *hooklib.Config
}

func (p *Plan) add(action, tool, format string, a ...any) {
	p.Items = append(p.Items, Item{action, tool, fmt.Sprintf(format, a...)})
}

// Changes reports whether applying the plan would change anything.
func (p *Plan) Changes() bool {
	for _, s := range p.Settings {
		if s.Problem == "" && len(s.Handlers) > 0 {
			return true
		}
	}
	return len(p.Config) > 0 || p.ToolMemoryFrom != "" || len(p.Summaries) > 0 || len(p.OldCommands) > 0
}

// SettingsFiles are the settings files of the three scopes.
func SettingsFiles(o Options) []Settings {
	return []Settings{
		{Scope: "user", Path: filepath.Join(o.ClaudeDir, "settings.json")},
		{Scope: "project", Path: filepath.Join(o.ProjectDir, ".claude", "settings.json")},
		{Scope: "local", Path: filepath.Join(o.ProjectDir, ".claude", "settings.local.json")},
	}
}

// scriptMarks tell an earlier tool's hook command by the script it runs.
var scriptMarks = []struct{ mark, tool string }{
	{"context-monitor.py", CCM}, {"intercept-bash.py", CCM}, {"intercept-glob.py", CCM},
	{"intercept-grep.py", CCM}, {"intercept-read.py", CCM}, {"intercept-webfetch.py", CCM},
	{"learn-large-commands.py", CCM}, {"pre-compact.py", CCM}, {"claude-session-purge.py", CCM},
	{"auto_context_manager.py", CAF}, {"pre_compact_preserve.py", CAF}, {"post_compact_verify.py", CAF},
	{"caf-hooks post-compact-verify", CAF}, {"compress_segments.py", CAF},
	{"-m hooks", Agentihook}, {"agentihooks", Agentihook},
}

// Classify tells which earlier tool a hook command belongs to ("" for
// none) and the script it runs.
func Classify(cmd string) (tool, script string) {
	for _, m := range scriptMarks {
		if strings.Contains(cmd, m.mark) {
			tool = m.tool
			break
		}
	}
	if tool == "" {
		return "", ""
	}
	for _, f := range strings.Fields(cmd) {
		f = strings.Trim(f, `"'`)
		if strings.HasSuffix(f, ".py") {
			return tool, f
		}
	}
	return tool, ""
}

// expand resolves ~, $HOME and $CLAUDE_PROJECT_DIR in a script path.
func (o Options) expand(p string) string {
	for _, v := range []string{"${HOME}", "$HOME"} {
		p = strings.ReplaceAll(p, v, o.UserHome)
	}
	for _, v := range []string{"${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"} {
		p = strings.ReplaceAll(p, v, o.ProjectDir)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(o.UserHome, p[1:])
	}
	return p
}

// readSettings finds the earlier tools' handlers in one settings file.
func (o Options) readSettings(s *Settings) bool {
	data, err := fsutil.ReadRegular(s.Path, maxFile)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		s.Problem = err.Error()
		return true
	}
	if p := notPlainJSON(data); p != "" {
		s.Problem = p
		for _, m := range scriptMarks {
			if bytes.Contains(data, []byte(m.mark)) {
				s.Found = append(s.Found, m.mark+" ("+m.tool+")")
			}
		}
		return true
	}
	gjson.GetBytes(data, "hooks").ForEach(func(ev, groups gjson.Result) bool {
		for gi, g := range groups.Array() {
			for hi, h := range g.Get("hooks").Array() {
				cmd := h.Get("command").String()
				tool, script := Classify(cmd)
				if tool == "" {
					continue
				}
				hd := Handler{Event: ev.String(), Group: gi, Index: hi, Command: cmd, Tool: tool, Script: script}
				if script != "" {
					p := o.expand(script)
					if filepath.IsAbs(p) {
						if _, err := os.Stat(p); os.IsNotExist(err) {
							hd.Missing = true
						}
					}
				}
				s.Handlers = append(s.Handlers, hd)
			}
		}
		return true
	})
	return true
}

// notPlainJSON says why a settings file is not plain JSON that ccm edits:
// a BOM, comments, trailing commas, or not JSON at all; "" when it is.
func notPlainJSON(data []byte) string {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return "starts with a byte order mark"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	if json.Valid(data) {
		if !gjson.ParseBytes(data).IsObject() {
			return "not a JSON object"
		}
		return ""
	}
	comments, trailing := false, false
	inStr := false
	lastSig := byte(0)
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(data) && (data[i+1] == '/' || data[i+1] == '*'):
			comments = true
			if data[i+1] == '/' {
				for i < len(data) && data[i] != '\n' {
					i++
				}
			} else if j := bytes.Index(data[i+2:], []byte("*/")); j >= 0 {
				i += j + 3
			}
			continue
		case (c == '}' || c == ']') && lastSig == ',':
			trailing = true
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			lastSig = c
		}
	}
	var why []string
	if comments {
		why = append(why, "comments")
	}
	if trailing {
		why = append(why, "trailing commas")
	}
	if len(why) == 0 {
		return "not valid JSON"
	}
	return "has " + strings.Join(why, " and ")
}

// Detect finds the earlier tools' installations and plans the migration.
func Detect(o Options) (*Plan, error) {
	p := &Plan{}
	for _, s := range SettingsFiles(o) {
		if !o.readSettings(&s) {
			continue
		}
		switch {
		case s.Problem != "" && len(s.Found) > 0:
			p.add("leave", strings.Join(toolsOf(s.Found), ", "), "%s %s: ccm edits none of it; remove by hand the hooks that run %s, then run ccm migrate again", s.Path, s.Problem, strings.Join(s.Found, ", "))
		case s.Problem != "":
			p.add("leave", "-", "%s %s (no earlier tool's hook found in its text)", s.Path, s.Problem)
		}
		for _, h := range s.Handlers {
			what := fmt.Sprintf("%s hook %q in %s: removed; ccm's hooks take its place", h.Event, h.Command, s.Path)
			if h.Missing {
				what += "; its script " + h.Script + " no longer exists"
			}
			p.add("take over", h.Tool, "%s", what)
		}
		if s.Problem == "" {
			sl := gjson.GetBytes(readOr(s.Path), "statusLine.command").String()
			if tool, _ := Classify(sl); tool != "" {
				p.add("leave", tool, "status line %q in %s: ccm has no status line; it stays as it is", sl, s.Path)
			}
		}
		p.Settings = append(p.Settings, s)
	}
	o.planInstall(p)
	o.detectConfig(p)
	o.detectData(p)
	return p, nil
}

// ccmHookRE matches a command that runs ccm's hook.
// It is compiled on first use, not in every `ccm hook` process.
var ccmHookRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)ccm["']? hook [A-Za-z]+$`) })

// planInstall picks the scopes ccm's hooks go to: those whose settings
// held the earlier tools' hooks. ccm's hooks in the user settings (there
// already, or added now) cover every project: adding them to a project's
// settings too would run each hook twice (Claude Code merges only
// identical commands), so the project's old hooks are only removed.
func (o Options) planInstall(p *Plan) {
	p.Install = map[string]bool{}
	userHasCCM := false
	for _, s := range p.Settings {
		if s.Problem == "" && len(s.Handlers) > 0 {
			p.Install[s.Scope] = true
		}
		if s.Scope == "user" && s.Problem == "" {
			gjson.GetBytes(readOr(s.Path), "hooks.@values.#.hooks.#.command").ForEach(func(_, v gjson.Result) bool {
				v.ForEach(func(_, c gjson.Result) bool {
					userHasCCM = userHasCCM || ccmHookRE().MatchString(strings.TrimSpace(c.String()))
					return true
				})
				return true
			})
		}
	}
	if p.Install["user"] || userHasCCM {
		for _, s := range p.Settings {
			if s.Scope != "user" && p.Install[s.Scope] {
				delete(p.Install, s.Scope)
				p.add("take over", "-", "%s: the earlier tools' hooks are removed and none of ccm's added, since ccm's hooks in the user settings cover this project (both would run every hook twice)", s.Path)
			}
		}
	}
}

func toolsOf(found []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range found {
		i := strings.LastIndex(f, "(")
		t := strings.TrimSuffix(f[i+1:], ")")
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// detectConfig plans the import of the earlier tools' settings into
// config.env: every value ccm reads that only an earlier tool's file sets.
func (o Options) detectConfig(p *Plan) {
	cfg := hooklib.LoadConfig(o.ClaudeDir, o.Lookup)
	p.cfg = cfg
	for _, f := range cfg.Legacy {
		for _, u := range f.Unreadable {
			p.add("leave", f.Tool, "%s %s: not a simple assignment, not imported", f.Label, u)
		}
	}
	for _, v := range hooklib.Vars {
		val := cfg.Lookup(v.Name)
		for _, f := range cfg.Legacy {
			if val.Source == f.Label {
				p.Config = append(p.Config, v.Name+"="+quoteEnv(val.Value))
				p.add("import", f.Tool, "%s=%s from %s into %s", v.Name, val.Value, f.Label, cfg.File)
			}
		}
	}
	for _, u := range cfg.Unused {
		p.add("leave", "-", "%s: ccm has no such setting", u)
	}
}
