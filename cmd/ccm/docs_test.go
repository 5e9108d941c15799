package main

import (
	"bytes"
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
	return inlineCode.ReplaceAllString(withoutFences(s), "``")
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
