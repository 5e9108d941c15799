package hooklib

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"ccm/internal/fsutil"
)

// DefaultPriority is a rule's priority without frontmatter. Lower goes
// first: 1 always load, 2 core contracts, 3 standard, 5 default, 8-10
// first to drop.
const DefaultPriority = 5

// maxRuleFile bounds what one rule file may weigh; larger files cannot fit
// a refresh anyway.
const maxRuleFile = 1 << 20

// Rule is one rules/*.md file ready to inject.
type Rule struct {
	Name     string // file name
	Label    string // how the refresh names it
	Path     string
	Priority int
	Body     string // without frontmatter, line ends normalised
}

// LoadRules reads the *.md files of dir (not recursive; README.md and empty
// files skipped). A missing dir is no rules; an unreadable dir, a binary
// file or broken frontmatter is reported through warn and skipped (or, for
// frontmatter that never closes, injected as plain text). Rules scoped with
// `paths:` are left out: Claude Code loads them when a matching file is
// read, and re-injecting them everywhere ignores their scope (as
// agentihooks did).
func LoadRules(dir, labelPrefix string, warn func(string)) []Rule {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(fmt.Sprintf("rules dir: %v", err))
		}
		return nil
	}
	var rules []Rule
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") || strings.EqualFold(name, "README.md") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path) // follows symlinks, as agentihooks did
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > maxRuleFile {
			warn(fmt.Sprintf("rule %s: %d bytes, larger than %d; skipped", path, fi.Size(), maxRuleFile))
			continue
		}
		data, err := fsutil.ReadRegular(path, maxRuleFile)
		if err != nil {
			warn(fmt.Sprintf("rule %s: %v", path, err))
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
			warn(fmt.Sprintf("rule %s: binary content; skipped", path))
			continue
		}
		fm := ParseFrontmatter(string(data))
		if fm.Problem != "" {
			warn(fmt.Sprintf("rule %s: %s", path, fm.Problem))
		}
		if fm.Scoped || strings.TrimSpace(fm.Body) == "" {
			continue
		}
		rules = append(rules, Rule{Name: name, Label: labelPrefix + name, Path: path, Priority: fm.Priority, Body: strings.TrimSpace(fm.Body)})
	}
	return rules
}

// Frontmatter is what ParseFrontmatter found.
type Frontmatter struct {
	Priority int
	Scoped   bool   // has a paths: key with a value
	Body     string // the text after the frontmatter, with \n line ends
	Problem  string // a description of broken frontmatter, or ""
}

// ParseFrontmatter parses a leading "---" YAML block. A BOM and CRLF line
// ends are accepted (agentihooks missed both and injected the
// frontmatter as text). Only priority and paths are read; every
// key is stripped from the body. A priority that is not an integer is
// reported, not silently taken as 5 (as agentihooks did).
func ParseFrontmatter(s string) Frontmatter {
	s = strings.TrimPrefix(s, "\uFEFF")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	fm := Frontmatter{Priority: DefaultPriority, Body: s}
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || strings.TrimRight(first, " \t") != "---" {
		return fm
	}
	lines := strings.Split(rest, "\n")
	end := -1
	for i, l := range lines {
		if t := strings.TrimRight(l, " \t"); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		fm.Problem = "frontmatter never closes; injected as plain text"
		return fm
	}
	fm.Body = strings.Join(lines[end+1:], "\n")
	for i, l := range lines[:end] {
		key, val, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		switch strings.TrimSpace(key) {
		case "priority":
			n, err := strconv.Atoi(val)
			if err != nil {
				fm.Problem = fmt.Sprintf("priority %q is not an integer; using %d", val, DefaultPriority)
				continue
			}
			fm.Priority = n
		case "paths":
			if val != "" && val != "[]" {
				fm.Scoped = true
			} else if i+1 < end && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "-") {
				fm.Scoped = true
			}
		}
	}
	return fm
}

// SortRules orders rules by priority, then file name, then the order they
// were given in (global before project).
func SortRules(rules []Rule) {
	sort.SliceStable(rules, func(i, j int) bool {
		if rules[i].Priority != rules[j].Priority {
			return rules[i].Priority < rules[j].Priority
		}
		return rules[i].Name < rules[j].Name
	})
}

// DedupeRules drops rules whose content, normalised, equals an earlier
// one's: the same rule in the global and the project directory goes in
// once (agentihooks injected it twice).
func DedupeRules(rules []Rule) []Rule {
	seen := make(map[[32]byte]bool, len(rules))
	out := rules[:0]
	for _, r := range rules {
		h := ContentHash(r.Body)
		if seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, r)
	}
	return out
}

// ContentHash hashes text normalised the way instruction loaders do:
// trailing whitespace per line removed, blank-line runs collapsed, the
// whole trimmed.
func ContentHash(s string) [32]byte {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	var b strings.Builder
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteByte('\n')
		}
		blank = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return sha256.Sum256([]byte(strings.TrimSpace(b.String())))
}

// OmittedMarker is the line that says rules were left out.
func OmittedMarker(n int) string {
	return fmt.Sprintf("[%d rule(s) omitted — size limit reached]", n)
}

// RenderRules lays out header and rules within budget (measured by Size).
// Rules go in their order; one that does not fit is skipped and later,
// smaller ones still go in (agentihooks stopped at the first misfit,
// and one 9.6k rule left nothing at all). If any were skipped, the
// omitted marker closes the text; its room is reserved only then. It
// returns "" when there is nothing to say.
func RenderRules(header string, rules []Rule, budget int) (text string, included, omitted int) {
	if len(rules) == 0 || Size(header) > budget {
		return "", 0, 0
	}
	entries := make([]string, len(rules))
	for i, r := range rules {
		entries[i] = "\n\n[" + r.Label + "]\n" + r.Body
	}
	fill := func(reserve int) []bool {
		in := make([]bool, len(entries))
		used := Size(header)
		for i, e := range entries {
			if n := Size(e); used+n <= budget-reserve {
				in[i] = true
				used += n
			}
		}
		return in
	}
	in := fill(0)
	if count(in) < len(in) {
		in = fill(Size("\n\n" + OmittedMarker(len(rules))))
	}
	var b strings.Builder
	b.WriteString(header)
	for i, e := range entries {
		if in[i] {
			b.WriteString(e)
			included++
		} else {
			omitted++
		}
	}
	if omitted > 0 {
		b.WriteString("\n\n" + OmittedMarker(omitted))
	}
	if Size(b.String()) > budget {
		return "", 0, len(rules) // not even the header and the marker fit
	}
	return b.String(), included, omitted
}

func count(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}
