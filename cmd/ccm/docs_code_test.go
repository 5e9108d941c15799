// The docs held against the code: every configuration variable documented,
// the layers as docs/development.md draws them, and docs/commands.md as the
// commands' own --help.

package main

import (
	"bufio"
	"bytes"
	"flag"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestConfigDocumented: every variable ccm config prints is in a table
// of docs/configuration.md, with its default when that is a plain value.
func TestConfigDocumented(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, ".claude")
	if err := os.Mkdir(claude, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CCM_") || strings.HasPrefix(name, "CONTEXT_") || strings.HasPrefix(name, "AGENTI") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	var out bytes.Buffer
	if code := ccmMain([]string{"ccm", "config"}, strings.NewReader(""), &out, io.Discard); code != 0 {
		t.Fatalf("ccm config: exit %d", code)
	}
	doc := readRepo(t, "docs/configuration.md")
	rows := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
		for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(first, -1) {
			rows[m[1]] = l
		}
	}
	line := regexp.MustCompile(`^([A-Z][A-Z0-9_]+)=(\S*)\s+#`)
	n := 0
	for _, l := range strings.Split(out.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n++
		row, ok := rows[m[1]]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md has no row for %s (ccm config: %s)", m[1], strings.TrimSpace(l))
		case m[2] != "" && !strings.Contains(m[2], string(filepath.Separator)) && !strings.Contains(row, "`"+m[2]+"`"):
			t.Errorf("docs/configuration.md: %s's default is %s, its row says: %s", m[1], m[2], row)
		}
	}
	if n < 40 {
		t.Fatalf("read only %d variables from ccm config:\n%s", n, out.String())
	}
}

// TestLayers: the imports of every non-test Go file keep to the layers
// of the table in docs/development.md: a package imports only packages
// of its own top-level directory or of a lower layer.
func TestLayers(t *testing.T) {
	doc := readRepo(t, "docs/development.md")
	layerOf := map[string]int{}
	row := regexp.MustCompile("(?m)^\\| (\\d) \\| (.+) \\|$")
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.Atoi(m[1])
		for _, name := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[2], -1) {
			layerOf[name[1]] = n
		}
	}
	if len(layerOf) < 8 {
		t.Fatalf("read %d layers from docs/development.md's table", len(layerOf))
	}
	top := func(dir string) string { first, _, _ := strings.Cut(dir, "/"); return first }
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, repoRoot+string(filepath.Separator)))
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "testdata" || strings.HasPrefix(n, ".") && rel != "." && p != repoRoot {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := path.Dir(rel)
		from, ok := layerOf[top(dir)]
		if !ok {
			t.Errorf("%s: its directory %s is in no layer of docs/development.md", rel, top(dir))
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(ip, "ccm/") {
				continue
			}
			target := strings.TrimPrefix(ip, "ccm/")
			checked++
			if top(target) == top(dir) {
				continue
			}
			to, ok := layerOf[top(target)]
			if !ok || to >= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import up or across the layers", rel, from, ip, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d imports", checked)
	}
}

// updateDocs rewrites docs/commands.md from the commands' help.
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/commands.md from every command's --help")

// TestCommandsPage: docs/commands.md is every command's --help, as the
// binary prints it, so the reference of every flag has one source, the
// command. After changing a command's help, run
//
//	go test ./cmd/ccm -run TestCommandsPage -update-docs
//
// and commit the page.
func TestCommandsPage(t *testing.T) {
	var page strings.Builder
	page.WriteString(`# Command reference

Every command's ` + "`--help`" + `, as ` + "`ccm`" + ` prints it. This page is generated from the
commands themselves (` + "`go test ./cmd/ccm -run TestCommandsPage -update-docs`" + `), so it says
exactly what the binary says; what the commands do and why is on the page of each area
(the [README](../README.md#documentation) lists them).
`)
	root := newApp(nil, io.Discard, io.Discard)
	var walk func(cmd *cli.Command, path []string)
	walk = func(cmd *cli.Command, path []string) {
		var out bytes.Buffer
		args := append(append([]string{}, path...), "--help")
		if code := ccmMain(args, strings.NewReader(""), &out, io.Discard); code != 0 {
			t.Fatalf("%s: exit %d", strings.Join(args, " "), code)
		}
		page.WriteString("\n## " + strings.Join(path, " ") + "\n\n```text\n")
		page.WriteString(strings.TrimRight(out.String(), "\n") + "\n```\n")
		for _, sub := range cmd.Commands {
			if sub.Hidden || sub.Name == "help" {
				continue
			}
			walk(sub, append(append([]string{}, path...), sub.Name))
		}
	}
	walk(root, []string{root.Name})
	name := filepath.Join(repoRoot, "docs", "commands.md")
	if *updateDocs {
		if err := os.WriteFile(name, []byte(page.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != page.String() {
		t.Errorf("docs/commands.md is not the commands' --help (%v): run go test ./cmd/ccm -run TestCommandsPage -update-docs", err)
	}
}
