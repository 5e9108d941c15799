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
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// The front door's tests: the README and docs/ link to pages and
// headings that exist, the README's command table and exit codes say
// what --help says, its command lines use commands and flags that exist,
// its first command runs, docs/configuration.md lists every variable
// ccm config prints, and the layers docs/development.md draws are the
// imports of the code.

// repoRoot is the repository, two folders above cmd/ccm.
const repoRoot = "../.."

// pendingPages are pages the README links to that a branch not yet merged
// adds (none now). A link to one of them is accepted while the page is
// missing; once it exists, it is checked like any other. Drop an entry
// once its page is merged.
var pendingPages []string

// docFiles returns README.md and every page under docs/, relative to the
// repository.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages: %v", err)
	}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, repoRoot+string(filepath.Separator))))
	}
	return files
}

func readRepo(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutCode blanks fenced code blocks and inline code spans, keeping
// the line count, so that links are looked for in prose only.
func withoutCode(s string) string {
	var out strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			out.WriteString("\n")
			continue
		}
		if fenced {
			out.WriteString("\n")
			continue
		}
		out.WriteString(inlineCode.ReplaceAllString(line, "``"))
	}
	return out.String()
}

var (
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation dropped, spaces to '-', repeats numbered.
func anchors(s string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(withoutFences(s), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("—–…·’‘“”", r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// withoutFences blanks fenced code blocks only (a "# comment" in a shell
// block is no heading).
func withoutFences(s string) string {
	var out strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			out.WriteString("\n")
			continue
		}
		if fenced {
			out.WriteString("\n")
		} else {
			out.WriteString(line)
		}
	}
	return out.String()
}

// TestDocLinks: every link of the README and of docs/ names a file that
// exists and, with a #fragment, a heading of that file; and every docs
// page a Go or shell file mentions exists.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	texts := map[string]string{}
	for _, f := range files {
		texts[f] = readRepo(t, f)
	}
	for _, f := range files {
		for i, line := range strings.Split(withoutCode(texts[f]), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				resolved := f
				if file != "" {
					resolved = path.Clean(path.Join(path.Dir(f), file))
				}
				where := f + ":" + strconv.Itoa(i+1) + ": " + target
				body, ok := texts[resolved]
				if !ok {
					b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(resolved)))
					switch {
					case err == nil:
						body = string(b)
					case slices.Contains(pendingPages, resolved):
						continue
					default:
						t.Errorf("%s: no such file %s", where, resolved)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(resolved, ".md") && !anchors(body)[frag] {
					t.Errorf("%s: %s has no heading #%s", where, resolved, frag)
				}
			}
		}
	}

	// Comments and scripts point to pages by path, docs/NAME.md, and
	// sometimes to a part of one by its words: docs/NAME.md, "Heading".
	ref := regexp.MustCompile(`docs/[a-z0-9-]+\.md`)
	part := regexp.MustCompile(`(docs/[a-z0-9-]+\.md)[,:] "([^"]+)"`)
	joinComment := regexp.MustCompile(`\n\s*(//|#)\s*`)
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "testdata" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".go" && ext != ".sh" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, r := range slices.Compact(ref.FindAllString(string(b), -1)) {
			if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(r))); err != nil && !slices.Contains(pendingPages, r) {
				t.Errorf("%s mentions %s, which does not exist", p, r)
			}
		}
		for _, m := range part.FindAllStringSubmatch(joinComment.ReplaceAllString(string(b), " "), -1) {
			page, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(m[1])))
			if err == nil && !strings.Contains(strings.Join(strings.Fields(string(page)), " "), m[2]) {
				t.Errorf("%s points to %s, %q, which that page does not say", p, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDocPagesLinkedFromReadme: the README is the way in to every page.
func TestDocPagesLinkedFromReadme(t *testing.T) {
	readme := withoutCode(readRepo(t, "README.md"))
	for _, f := range docFiles(t)[1:] {
		if !strings.Contains(readme, "("+f+")") && !strings.Contains(readme, "("+f+"#") {
			t.Errorf("README.md does not link to %s", f)
		}
	}
}

// TestReadmeCommandTable: the README's command table has one row per
// command, and its summary is the command's Usage, word for word: the
// summary is written once, in the command, and ccm --help and the README
// both show it.
func TestReadmeCommandTable(t *testing.T) {
	readme := readRepo(t, "README.md")
	row := regexp.MustCompile("(?m)^\\| `ccm ([a-z-]+)` \\| ([^|]+) \\|")
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(readme, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("README: two rows for ccm %s", m[1])
		}
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	root := newApp(nil, io.Discard, io.Discard)
	for _, c := range root.Commands {
		if c.Hidden || c.Name == "help" {
			continue
		}
		got, ok := rows[c.Name]
		switch {
		case !ok:
			t.Errorf("README's command table has no row for ccm %s (%s)", c.Name, c.Usage)
		case got != c.Usage:
			t.Errorf("README: ccm %s is %q, its --help says %q", c.Name, got, c.Usage)
		}
		delete(rows, c.Name)
	}
	for name := range rows {
		t.Errorf("README's command table lists ccm %s, which is no command", name)
	}
}

// TestReadmeExitCodes: the README's exit codes are the ones every
// command's --help lists (exitStatusHelp), in the same words.
func TestReadmeExitCodes(t *testing.T) {
	readme := readRepo(t, "README.md")
	line := regexp.MustCompile(`^\s+(\d+)\s+(.+)$`)
	n := 0
	for _, l := range strings.Split(exitStatusHelp, "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n++
		if want := "| " + m[1] + " | " + m[2] + " |"; !strings.Contains(readme, want) {
			t.Errorf("README's exit codes lack %q", want)
		}
	}
	if n < 5 {
		t.Fatalf("read %d exit codes from exitStatusHelp", n)
	}
}

// TestDocCommandLines: every ccm command line in a code block of the
// README and of docs/ names a command that exists and flags it has.
// Placeholders ([--flag N], FILE|DIR, ...) are read as the flags they
// name.
func TestDocCommandLines(t *testing.T) {
	root := newApp(nil, io.Discard, io.Discard)
	checked := 0
	for _, f := range docFiles(t) {
		if f == "docs/commands.md" {
			continue // the help itself, generated from the tree (TestCommandsPage)
		}
		fenced := false
		for i, line := range strings.Split(readRepo(t, f), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if !fenced {
				continue
			}
			where := f + ":" + strconv.Itoa(i+1)
			checked += checkCommandLine(t, root, where, line)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d ccm command lines found in the docs", checked)
	}
}

// checkCommandLine checks the ccm invocations of one line (several when
// joined by pipes or &&) and returns how many it found.
func checkCommandLine(t *testing.T, root *cli.Command, where, line string) int {
	t.Helper()
	code, _, _ := strings.Cut(line, " #")
	if strings.HasPrefix(strings.TrimSpace(code), "#") {
		return 0
	}
	n := 0
	for _, part := range regexp.MustCompile(`\|\s|&&|;`).Split(code, -1) {
		f := strings.Fields(part)
		i := slices.IndexFunc(f, isCCM)
		if i < 0 || i > 0 && slices.Contains([]string{"install", "build", "mv", "cp", "-o"}, f[i-1]) {
			continue
		}
		n++
		var sub []string
		words := f[i+1:]
		for _, w := range words {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || findCommand(root, append(sub, w)) == nil {
				break
			}
			sub = append(sub, w)
		}
		cmd := findCommand(root, sub)
		known := append(flagNames(root), "version", "v")
		known = append(known, flagNames(cmd)...)
		for _, w := range words {
			w = strings.TrimLeft(w, "[")
			if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
				continue
			}
			name := strings.TrimLeft(w, "-")
			name, _, _ = strings.Cut(name, "=")
			name = strings.TrimRight(name, "]|,.)")
			name, _, _ = strings.Cut(name, "|")
			if name == "" || !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name) {
				continue
			}
			if !slices.Contains(known, name) {
				t.Errorf("%s: %q: ccm %s has no flag -%s", where, strings.TrimSpace(line), strings.Join(sub, " "), name)
			}
		}
	}
	return n
}

// isCCM reports whether a word of a command line runs ccm: ccm itself,
// the package in a clone (go run ./cmd/ccm), or a binary named by a
// variable or an absolute path ($HOME/.local/bin/ccm).
func isCCM(w string) bool {
	return w == "ccm" || w == "./cmd/ccm" ||
		path.Base(w) == "ccm" && (strings.HasPrefix(w, "$") || strings.HasPrefix(w, "/"))
}

// TestReadmeFirstCommand runs the README's first command as a newcomer
// does (in a clone, with a Claude Code config dir): it exits 0, prints
// the dry run's summary, and writes nothing, neither the transcript nor
// anything in the config dir.
func TestReadmeFirstCommand(t *testing.T) {
	readme := readRepo(t, "README.md")
	const cmdline = "go run ./cmd/ccm purge --dry-run testdata/sample-session.jsonl"
	if !strings.Contains(readme, cmdline) {
		t.Fatalf("the README no longer starts with %q: update this test", cmdline)
	}
	home := t.TempDir()
	claude := filepath.Join(home, ".claude")
	if err := os.Mkdir(claude, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CCM_CACHE_DIR", "")
	t.Setenv("CCM_HOME", "")
	sample := filepath.Join(repoRoot, "testdata", "sample-session.jsonl")
	before, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := ccmMain([]string{"ccm", "purge", "--dry-run", sample}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"would purge", "stubs", "repairs", "(dry run: nothing was written)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	after, err := os.ReadFile(sample)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the dry run changed %s (%v)", sample, err)
	}
	entries, err := os.ReadDir(claude)
	if err != nil || len(entries) != 0 {
		t.Errorf("the dry run wrote into the config dir: %v %v", entries, err)
	}
}

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
