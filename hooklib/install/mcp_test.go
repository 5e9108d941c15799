package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// Install then uninstall gives the file back byte for byte, whatever its
// layout; the server's entry is the one Claude Code runs.
func TestMCPInstallUninstallIsTheIdentity(t *testing.T) {
	cases := map[string]string{
		"missing":            "",
		"empty object":       "{}",
		"pretty, 2 spaces":   "{\n  \"numStartups\": 3,\n  \"projects\": {}\n}\n",
		"pretty, 1 space":    "{\n \"hasCompletedOnboarding\": true\n}",
		"compact":            `{"a":1,"b":[1,2]}`,
		"crlf":               "{\r\n  \"a\": 1\r\n}\r\n",
		"other servers":      "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\"\n    }\n  }\n}\n",
		"empty servers":      "{\n  \"mcpServers\": {}\n}\n",
		"our name, not ours": "{\n  \"mcpServers\": {\n    \"ccm\": {\n      \"command\": \"/old/ccm\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n",
	}
	for name, orig := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".claude.json")
			if name != "missing" {
				os.WriteFile(path, []byte(orig), 0o600)
			}
			o := Options{Home: filepath.Join(dir, "home"), Exe: "/usr/local/bin/ccm", Now: time.Unix(1e9, 0)}
			r, err := InstallMCP(o, path)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			srv := gjson.GetBytes(data, "mcpServers.ccm")
			if !r.Changed || srv.Get("command").Str != o.Exe || srv.Get("args").Raw != `["mcp"]` || srv.Get("type").Str != "stdio" || !gjson.ValidBytes(data) {
				t.Fatalf("after install: changed %v, %s", r.Changed, data)
			}
			if name == "other servers" && gjson.GetBytes(data, "mcpServers.github.command").Str != "gh-mcp" {
				t.Fatalf("the other server is gone: %s", data)
			}
			if name == "pretty, 2 spaces" && !strings.Contains(string(data), "\n  \"mcpServers\": {\n    \"ccm\": {\n      \"type\": \"stdio\",") {
				t.Fatalf("not in the file's layout:\n%s", data)
			}
			// A second install changes nothing.
			if r, err := InstallMCP(o, path); err != nil || r.Changed {
				t.Fatalf("second install: %v %v", r.Changed, err)
			}
			if _, err := UninstallMCP(o, path); err != nil {
				t.Fatal(err)
			}
			back, err := os.ReadFile(path)
			if name == "missing" {
				if !os.IsNotExist(err) {
					t.Fatalf("the file install created is still there: %q", back)
				}
				return
			}
			if string(back) != orig {
				t.Fatalf("after uninstall:\n%q\nwant\n%q", back, orig)
			}
		})
	}
}

func TestMCPUninstallLeavesAServerItDidNotAdd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude.json")
	orig := "{\n  \"mcpServers\": {\n    \"ccm\": {\n      \"command\": \"/mine\"\n    }\n  }\n}\n"
	os.WriteFile(path, []byte(orig), 0o600)
	o := Options{Home: filepath.Join(dir, "home"), Exe: "/usr/local/bin/ccm"}
	if r, err := UninstallMCP(o, path); err != nil || r.Changed {
		t.Fatalf("uninstall without install: %v %v", r.Changed, err)
	}
	if back, _ := os.ReadFile(path); string(back) != orig {
		t.Fatal("uninstall touched a file install never changed")
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := InstallMCP(o, path); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("a broken file: %v", err)
	}
	if back, _ := os.ReadFile(path); string(back) != "{not json" {
		t.Fatal("a broken file was changed")
	}
}

func TestMCPConfigPath(t *testing.T) {
	if p := MCPConfigPath("/h/.claude", "/h", false); p != "/h/.claude.json" {
		t.Errorf("default config dir: %s", p)
	}
	if p := MCPConfigPath("/h/.claude", "/h", true); p != "/h/.claude/.claude.json" {
		t.Errorf("CLAUDE_CONFIG_DIR set to ~/.claude: %s", p)
	}
	if p := MCPConfigPath("/work/cfg", "/h", false); p != "/work/cfg/.claude.json" {
		t.Errorf("another config dir: %s", p)
	}
}
