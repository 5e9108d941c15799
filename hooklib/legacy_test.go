package hooklib

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// ParseConfigPy reads simple assignments and names every other assignment
// to a setting, never guessing at code.
func TestParseConfigPy(t *testing.T) {
	src := "\xef\xbb\xbf# claude-context-manager settings\r\n" +
		"import os\n" +
		"CCM_ENABLED = True\n" +
		"CCM_PRUNE_MAX_SIZE_MB = 1_000  # MB\n" +
		"CCM_DEFAULT_PIN_LEVEL = \"hard\"\n" +
		"CACHE_DIR = os.path.expanduser('~/.claude/cache')\n" +
		"COMPACT_INSTRUCTIONS = \"\"\"Focus on\n" +
		"the task\"\"\"\n" +
		"ESCAPED = 'a\\'b'\n" +
		"EMPTY = None\n" +
		"lower_case = 3\n" +
		"X == 3\n" +
		"if True:\n    CCM_ENABLED = False\n"
	vals, order, bad := ParseConfigPy([]byte(src))
	want := map[string]string{"CCM_ENABLED": "true", "CCM_PRUNE_MAX_SIZE_MB": "1000", "CCM_DEFAULT_PIN_LEVEL": "hard", "EMPTY": ""}
	if !reflect.DeepEqual(vals, want) {
		t.Errorf("values %v, want %v", vals, want)
	}
	if !reflect.DeepEqual(order, []string{"CCM_ENABLED", "CCM_PRUNE_MAX_SIZE_MB", "CCM_DEFAULT_PIN_LEVEL", "EMPTY"}) {
		t.Errorf("order %v", order)
	}
	wantBad := []string{
		"line 6: CACHE_DIR = os.path.expanduser('~/.claude/cache')",
		`line 7: COMPACT_INSTRUCTIONS = """Focus on`,
		`line 9: ESCAPED = 'a\'b'`,
		"line 14: CCM_ENABLED = False (inside a block)",
	}
	if !reflect.DeepEqual(bad, wantBad) {
		t.Errorf("unreadable %q, want %q", bad, wantBad)
	}
}

// The earlier tools' settings: below the environment and config.env, and
// mapped onto what ccm does (hooks off, pin default).
func TestLegacySettings(t *testing.T) {
	dir := t.TempDir()
	home, claude := filepath.Join(dir, "home"), filepath.Join(dir, "home", ".claude")
	os.MkdirAll(filepath.Join(claude, "hooks"), 0o700)
	os.MkdirAll(filepath.Join(home, ".agentihooks"), 0o700)
	os.WriteFile(filepath.Join(claude, "hooks", "config.py"), []byte("CCM_ENABLED = False\nCCM_DEFAULT_PIN_LEVEL = 'soft'\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".agentihooks", ".env"), []byte("CONTEXT_REFRESH_INTERVAL=5\n"), 0o600)
	env := map[string]string{"HOME": home}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c := LoadConfig(claude, lookup)
	if !c.Disabled() {
		t.Error("CCM_ENABLED = False in config.py: hooks not disabled")
	}
	if got := c.PinDefault("CCM_CAPTURE_PIN_DEFAULT"); got != "soft" {
		t.Errorf("capture pin default %q, want soft from CCM_DEFAULT_PIN_LEVEL", got)
	}
	if v := c.Lookup("CONTEXT_REFRESH_INTERVAL"); v.Value != "5" || v.Source != "~/.agentihooks/.env" {
		t.Errorf("refresh interval %+v", v)
	}
	env["CCM_CAPTURE_PIN_DEFAULT"] = "hard"
	env["CCM_ENABLED"] = "1"
	env["CONTEXT_REFRESH_INTERVAL"] = "3"
	c = LoadConfig(claude, lookup)
	if c.Disabled() || c.PinDefault("CCM_CAPTURE_PIN_DEFAULT") != "hard" || c.Int("CONTEXT_REFRESH_INTERVAL") != 3 {
		t.Errorf("the environment does not win: disabled %v, pin %s, interval %d", c.Disabled(), c.PinDefault("CCM_CAPTURE_PIN_DEFAULT"), c.Int("CONTEXT_REFRESH_INTERVAL"))
	}
	if !DisabledByEnv(func(k string) (string, bool) { return "false", k == "CCM_ENABLED" }) {
		t.Error("CCM_ENABLED=false in the environment does not disable the hooks")
	}
}
