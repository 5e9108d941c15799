package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/testutil"
)

// jsonCase is one run of a command under --json: args after "ccm --json";
// empty is true for a listing run on an empty state, which must list
// nothing as [] (never null, never no output); stdin is what the command
// reads.
type jsonCase struct {
	args  []string
	empty bool
	stdin string
}

// TestJSONEverywhere runs every command under --json, once where it works
// and once where it fails, and holds the one rule (docs/cli.md): a command
// that ran to its end writes exactly one JSON document on stdout, whatever
// its exit status (findings and failed items are in it); a command that
// could not run writes nothing on stdout, exits 2 or more, and says why on
// stderr in one "ccm: " line (and indented hints).
func TestJSONEverywhere(t *testing.T) {
	claude, _ := storeEnv(t)
	home := filepath.Dir(claude)
	t.Setenv("HOME", home)
	t.Setenv("CCM_HOME", filepath.Join(claude, "ccm"))
	sample, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "testdata", "sample-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // install and migrate look at the working directory's project
	proj := filepath.Join(claude, "projects", "-tmp-p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, "0a0b0c0d-1111-4a2b-9d7e-123456789abc.jsonl")
	text := filepath.Join(home, "notes.txt")
	for p, b := range map[string][]byte{file: sample, text: []byte("some notes\n")} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(proj, "missing.jsonl")
	noKey := "sha256:" + strings.Repeat("0", 64)

	// Before anything is stored: the listings list nothing.
	for _, c := range []jsonCase{
		{args: []string{"memory", "list"}, empty: true},
		{args: []string{"tasks"}, empty: true},
		{args: []string{"capture", "stats"}},
		{args: []string{"sessions", "--archived"}},
		{args: []string{"check", proj + "/"}},
	} {
		checkJSON(t, c)
	}
	code, out, _ := runCCM("", "cache", "put", text)
	if code != 0 {
		t.Fatalf("cache put: exit %d", code)
	}
	key := strings.TrimSpace(out)
	bundle := filepath.Join(home, "s.tar.zst")
	if code, _, errs := runCCM("", "export", "--session", "0a0b0c0d", "-o", bundle); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}

	// ccm mcp speaks the Model Context Protocol on stdout, a JSON document
	// a request: one request, one document.
	cases := map[string][]jsonCase{
		"ccm analyze":       {{args: []string{"analyze", "--no-tokens", file}}, {args: []string{"analyze", missing}}},
		"ccm audit":         {{args: []string{"audit", file}}, {args: []string{"audit", text}}},
		"ccm check":         {{args: []string{"check", file}}, {args: []string{"check", missing}}},
		"ccm purge":         {{args: []string{"purge", "-n", "--no-tokens", file}}, {args: []string{"purge", "--threshold", "0", file}}},
		"ccm restore":       {{args: []string{"restore", "-n", file}}, {args: []string{"restore", missing}}},
		"ccm cache put":     {{args: []string{"cache", "put", "-n", text}}, {args: []string{"cache", "put", missing}}},
		"ccm cache get":     {{args: []string{"cache", "get", key}}, {args: []string{"cache", "get", noKey}}},
		"ccm cache last":    {{args: []string{"cache", "last"}}, {args: []string{"cache", "last", "extra"}}},
		"ccm cache ls":      {{args: []string{"cache", "ls"}}, {args: []string{"cache", "ls", "-n", "-1"}}},
		"ccm cache stats":   {{args: []string{"cache", "stats"}}, {args: []string{"--cache-dir", missing, "cache", "stats"}}},
		"ccm cache verify":  {{args: []string{"cache", "verify"}}, {args: []string{"--cache-dir", missing, "cache", "verify"}}},
		"ccm pin":           {{args: []string{"pin", "-n", key}}, {args: []string{"pin", noKey}}},
		"ccm unpin":         {{args: []string{"unpin", key}}, {args: []string{"unpin", "nonsense"}}},
		"ccm pins":          {{args: []string{"pins"}, empty: true}, {args: []string{"pins", "extra"}}},
		"ccm prune":         {{args: []string{"prune", "-n", "--gc-unreferenced"}}, {args: []string{"prune", "--max-age-days", "x"}}},
		"ccm report":        {{args: []string{"report", "--no-purge", file}}, {args: []string{"report", missing}}},
		"ccm sessions":      {{args: []string{"sessions"}}, {args: []string{"sessions", "--sort", "color"}}},
		"ccm du":            {{args: []string{"du"}}, {args: []string{"du", "--jobs", "-1"}}},
		"ccm search":        {{args: []string{"search", "nothing", "matches", "this"}}, {args: []string{"search", "--session", "0a0", "x"}}},
		"ccm mcp":           {{args: []string{"mcp"}, stdin: `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"}, {args: []string{"mcp", "extra"}}},
		"ccm archive":       {{args: []string{"archive", "-n"}}, {args: []string{"archive", "--older-than", "soon"}}},
		"ccm unarchive":     {{args: []string{"unarchive", "-n", "--all"}}, {args: []string{"unarchive"}}},
		"ccm export":        {{args: []string{"export", "-n", "--all", "-o", filepath.Join(home, "out")}}, {args: []string{"export", "--all"}}},
		"ccm import":        {{args: []string{"import", "-n", "--new-id", "--cwd", home, bundle}}, {args: []string{"import", missing}}},
		"ccm clean":         {{args: []string{"clean", "-n"}}, {args: []string{"clean", "--keep-backups", "-1"}}},
		"ccm maintain":      {{args: []string{"maintain", "-n"}}, {args: []string{"maintain", "extra"}}},
		"ccm install":       {{args: []string{"install", "-n"}}, {args: []string{"install", "--scope", "team"}}},
		"ccm uninstall":     {{args: []string{"uninstall", "-n"}}, {args: []string{"uninstall", "--scope", "team"}}},
		"ccm config":        {{args: []string{"config"}}, {args: []string{"--claude-dir", missing, "config"}}},
		"ccm compress":      {{args: []string{"compress", "--level", "light", text}}, {args: []string{"compress", "--level", "max", text}}},
		"ccm refresh":       {{args: []string{"refresh", "-n"}}, {args: []string{"refresh", "--session", "nobody"}}},
		"ccm capture stats": {{args: []string{"capture", "stats"}}, {args: []string{"--claude-dir", missing, "capture", "stats"}}},
		"ccm memory list":   {{args: []string{"memory", "list"}, empty: true}, {args: []string{"memory", "list", "extra"}}},
		"ccm memory clear":  {{args: []string{"memory", "clear", "-n"}}, {args: []string{"memory", "clear", "extra"}}},
		"ccm migrate":       {{args: []string{"migrate", "-n"}}, {args: []string{"migrate", "--undo"}}},
		"ccm tasks":         {{args: []string{"tasks"}, empty: true}, {args: []string{"--claude-dir", missing, "tasks"}}},
	}
	// Every command is run: a new one gets its cases here. The hooks
	// answer Claude Code in its protocol, not under --json.
	var all []leafCommand
	leaves(newApp(strings.NewReader(""), io.Discard, io.Discard), "ccm", &all)
	for _, l := range all {
		if _, ok := cases[l.name]; !ok && l.name != "ccm hook" {
			t.Errorf("%s is not run under --json by this test", l.name)
		}
	}
	for name, cs := range cases {
		failed := false
		for _, c := range cs {
			failed = checkJSON(t, c) || failed
		}
		if !failed {
			t.Errorf("%s: no case failed: each command needs one that does", name)
		}
	}
}

// checkJSON runs one case and checks the rule; it reports whether the
// command failed (exit 2 or more).
func checkJSON(t *testing.T, c jsonCase) bool {
	t.Helper()
	code, out, errs := runCCM(c.stdin, append([]string{"--json"}, c.args...)...)
	name := strings.Join(c.args, " ")
	if out == "" {
		if code < 2 {
			t.Errorf("%s: exit %d and nothing on stdout", name, code)
		}
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if !strings.HasPrefix(lines[0], "ccm: ") || len(lines) > 1 && !strings.HasPrefix(lines[1], "  ") {
			t.Errorf("%s: exit %d, stderr is not one \"ccm: \" line: %q", name, code, errs)
		}
		return true
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: exit %d, stdout is not JSON (%v): %.300s", name, code, err, out)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("%s: more than one JSON document on stdout: %.300s", name, out)
	}
	if c.empty && strings.TrimSpace(out) != "[]" {
		t.Errorf("%s: an empty listing is %.100q, want []", name, out)
	}
	if bytes.Contains([]byte(out), []byte(": null")) || strings.TrimSpace(out) == "null" {
		t.Errorf("%s: null where a list or value belongs: %.300s", name, out)
	}
	return code >= 2
}

// TestWriteJSONLists: writeJSON writes every nil slice as [], however it
// is reached, and leaves alone what is not a list.
func TestWriteJSONLists(t *testing.T) {
	type inner struct {
		Names []string `json:"names"`
		Bytes []byte   `json:"bytes"`
		Raw   rawJSON  `json:"raw"`
	}
	type outer struct {
		Items  []inner          `json:"items"`
		Ptr    *inner           `json:"ptr"`
		Nobody *inner           `json:"nobody"`
		Map    map[string]any   `json:"map"`
		Lists  map[string][]int `json:"lists"`
		hidden []string
	}
	v := &outer{Items: []inner{{Raw: rawJSON(`{"a":1}`)}}, Ptr: &inner{Raw: rawJSON(`2`)},
		Map: map[string]any{"none": []string(nil), "in": inner{Raw: rawJSON(`3`)}}, Lists: map[string][]int{"x": nil}}
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"bytes":null,"names":[],"raw":{"a":1}}],"lists":{"x":[]},` +
		`"map":{"in":{"bytes":null,"names":[],"raw":3},"none":[]},"nobody":null,"ptr":{"bytes":null,"names":[],"raw":2}}`
	if out, _ := json.Marshal(got); string(out) != want {
		t.Errorf("writeJSON gave\n%s\nwant\n%s", out, want)
	}
	if err := writeJSON(&b, []string(nil)); err != nil || !strings.HasSuffix(b.String(), "\n[]\n") {
		t.Errorf("a nil list at the top: %q", b.String())
	}
}
