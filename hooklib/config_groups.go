package hooklib

// VarGroup is a feature and the variables that configure it, as
// `ccm config` lists them.
type VarGroup struct {
	Feature string // a short title: "tool memory", "maintenance: ccm maintain"
	About   string // what the feature does, one line
	Vars    []Var
}

// varGroups names each variable's feature, in the order `ccm config`
// lists them, with the titles of docs/configuration.md's sections. Every
// variable of Vars is in exactly one group (a test holds it): a new
// variable gets its place here.
var varGroups = []struct {
	feature, about string
	names          []string
}{
	{"where things are", "ccm's own files and the CCM store", []string{"CCM_HOME", "CCM_CACHE_DIR"}},
	{"hooks and their log", "every hook on or off, what they log", []string{
		"CCM_HOOKS_DISABLED", "CLAUDE_HOOKS_PASSTHROUGH", "CCM_ENABLED", "CLAUDE_HOOK_LOG_ENABLED", "CLAUDE_HOOK_LOG_FILE"}},
	{"context refresh and compression", "UserPromptSubmit: rules and CLAUDE.md again every N prompts, compressed", []string{
		"CONTEXT_REFRESH_ENABLED", "CONTEXT_REFRESH_INTERVAL", "CONTEXT_REFRESH_CLAUDE_MD_INTERVAL",
		"CONTEXT_REFRESH_RULES_DIR", "CONTEXT_REFRESH_INCLUDE_PROJECT", "CONTEXT_REFRESH_MAX_CHARS",
		"CONTEXT_REFRESH_COMPRESSION", "CONTEXT_COMPRESSION_SCOPE", "CONTEXT_REFRESH_ABBREV_FILE"}},
	{"effort policy", "SessionStart: effort guidance; PreToolUse: a note before subagents", []string{
		"EFFORT_POLICY_ENABLED", "DEFAULT_EFFORT", "THINKING_BUDGET_TOKENS"}},
	{"capture of large tool outputs", "PostToolUse: large outputs go to the CCM store, the model gets a preview and a stub", []string{
		"CCM_CAPTURE_ENABLED", "BASH_THRESHOLD", "GLOB_THRESHOLD", "GREP_THRESHOLD", "READ_THRESHOLD",
		"CCM_CAPTURE_THRESHOLD", "CCM_CAPTURE_PIN_DEFAULT", "CCM_DEFAULT_PIN_LEVEL"}},
	{"tool memory", "lessons of failed tool calls, shown before the tool runs again", []string{
		"CCM_TOOL_MEMORY_ENABLED", "AGENTICORE_TOOL_MEMORY_PATH", "AGENTICORE_TOOL_MEMORY_MAX", "AGENTICORE_TOOL_MEMORY_SHOW"}},
	{"context monitor and audit", "Stop: a warning as the context fills, with the audit of what fills it", []string{
		"CONTEXT_MONITOR_ENABLED", "CONTEXT_WARN_THRESHOLDS", "CONTEXT_MAX_TOKENS", "CONTEXT_AUDIT_ENABLED",
		"CONTEXT_AUDIT_THRESHOLD_PCT", "COMPACT_SUGGEST_ENABLED"}},
	{"compaction: preservation and cold tasks", "PreCompact: the working state saved and given back; cold-task summaries", []string{
		"PRECOMPACT_PRESERVE_ENABLED", "COLD_TASKS_ENABLED", "CHECK_FREQUENCY", "CONTEXT_THRESHOLD", "TURNS_UNTIL_COLD"}},
	{"purge", "ccm purge's defaults, for flags not given", []string{"CCM_STUB_THRESHOLD_BYTES", "CCM_RECENT_LINES_WINDOW"}},
	{"maintenance: ccm maintain", "for cron: archive old sessions, clean, prune the store", []string{
		"CCM_MAINTAIN_ARCHIVE", "CCM_ARCHIVE_OLDER_THAN_DAYS", "CCM_ARCHIVE_MIN_SIZE_MB", "CCM_ARCHIVE_DIR",
		"CCM_MAINTAIN_CLEAN", "CCM_CLEAN_BACKUPS_OLDER_THAN_DAYS", "CCM_CLEAN_KEEP_BACKUPS", "CCM_CLEAN_EMPTY",
		"CCM_PRUNE_MAX_SIZE_MB", "CCM_PRUNE_MAX_AGE_DAYS"}},
	{"search", "ccm search and ccm mcp: text kept out of the index", []string{"CCM_SEARCH_REDACT"}},
	{"object storage", "ccm export, import and archives in S3-compatible object storage", []string{
		"CCM_ARCHIVE_TO", "CCM_S3_ENDPOINT", "CCM_MACHINE", "CCM_REDACT_FILE"}},
	{"the earlier tools' homes", "where agentihooks' settings are read from", []string{"AGENTIHOOKS_HOME"}},
}

// Groups lists every variable of Vars by feature. A variable no group
// names comes last, under "other", so none is ever left out.
func Groups() []VarGroup {
	byName := make(map[string]Var, len(Vars))
	for _, v := range Vars {
		byName[v.Name] = v
	}
	placed := map[string]bool{}
	var out []VarGroup
	for _, g := range varGroups {
		vg := VarGroup{Feature: g.feature, About: g.about}
		for _, n := range g.names {
			if v, ok := byName[n]; ok && !placed[n] {
				vg.Vars = append(vg.Vars, v)
				placed[n] = true
			}
		}
		out = append(out, vg)
	}
	other := VarGroup{Feature: "other", About: "variables no feature lists"}
	for _, v := range Vars {
		if !placed[v.Name] {
			other.Vars = append(other.Vars, v)
		}
	}
	if len(other.Vars) > 0 {
		out = append(out, other)
	}
	return out
}
