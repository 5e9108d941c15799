package hooklib

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"ccm/internal/fsutil"
)

// LegacyFile is a configuration file of one of the earlier tools, read
// below ccm's own config.env: agentihooks' $AGENTIHOOKS_HOME/.env and
// *.env, claude-context-manager's <claude dir>/hooks/config.py.
type LegacyFile struct {
	Path  string
	Label string // Path with the home folder shown as ~
	Tool  string // "agentihooks" or "claude-context-manager"
	// Values are the variables it sets, in the names ccm reads them by.
	Values map[string]string
	// Order lists the names in Values as the file sets them.
	Order []string
	// Unreadable names each line that sets something ccm cannot read
	// without running code ("line 12: CACHE_DIR = Path.home() / ...").
	Unreadable []string
}

// LegacyFiles finds and reads the earlier tools' configuration files,
// agentihooks' first (it loads .env, then the other *.env in name order,
// the first setting of a name winning), then claude-context-manager's.
// A file that does not exist is left out; one that cannot be read is
// listed with its error in Unreadable.
func LegacyFiles(claudeDir string, lookup func(string) (string, bool)) []LegacyFile {
	home, _ := lookup("HOME")
	var out []LegacyFile
	agh, ok := lookup("AGENTIHOOKS_HOME")
	if !ok || agh == "" {
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		agh = filepath.Join(home, ".agentihooks")
	}
	agh = expandHome(agh)
	names := []string{filepath.Join(agh, ".env")}
	if more, err := filepath.Glob(filepath.Join(agh, "*.env")); err == nil {
		sort.Strings(more)
		for _, m := range more {
			if m != names[0] {
				names = append(names, m)
			}
		}
	}
	for _, p := range names {
		f := LegacyFile{Path: p, Label: tildePath(p, home), Tool: "agentihooks", Values: map[string]string{}}
		data, err := fsutil.ReadRegular(p, maxReadFile)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			f.Unreadable = append(f.Unreadable, err.Error())
		} else {
			f.Values, f.Order = parseEnv(data)
		}
		out = append(out, f)
	}
	py := filepath.Join(claudeDir, "hooks", "config.py")
	data, err := fsutil.ReadRegular(py, maxReadFile)
	if !os.IsNotExist(err) {
		f := LegacyFile{Path: py, Label: tildePath(py, home), Tool: "claude-context-manager", Values: map[string]string{}}
		if err != nil {
			f.Unreadable = append(f.Unreadable, err.Error())
		} else {
			f.Values, f.Order, f.Unreadable = ParseConfigPy(data)
		}
		out = append(out, f)
	}
	return out
}

// parseEnv reads the .env dialect of readEnvFile from bytes.
func parseEnv(data []byte) (map[string]string, []string) {
	m := map[string]string{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		k, v, ok := envLine(sc.Text())
		if !ok {
			continue
		}
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = v
	}
	return m, order
}

// ParseConfigPy reads the simple assignments of a Python config module:
// NAME = literal, where the literal is a number, True, False, None or a
// string in single or double quotes, with an optional # comment. Every
// other assignment to an upper-case name (code: expressions, calls,
// several lines) is listed in unreadable with its line number, never
// guessed at. Booleans become "true"/"false", None "".
func ParseConfigPy(data []byte) (values map[string]string, order []string, unreadable []string) {
	values = map[string]string{}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		name, rhs, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !isConstName(name) || strings.HasPrefix(rhs, "=") || strings.HasSuffix(name, "!") {
			continue // not an assignment to a setting
		}
		v, ok := pyLiteral(strings.TrimSpace(rhs))
		if line[0] == ' ' || line[0] == '\t' {
			// Inside a block (if, def, try): whether it runs is code.
			unreadable = append(unreadable, fmt.Sprintf("line %d: %s (inside a block)", i+1, oneLineCut(line, 80)))
			continue
		}
		if !ok {
			unreadable = append(unreadable, fmt.Sprintf("line %d: %s", i+1, oneLineCut(line, 80)))
			continue
		}
		if _, dup := values[name]; !dup {
			order = append(order, name)
		}
		values[name] = v
	}
	return values, order, unreadable
}

// isConstName reports whether s is an upper-case Python name (a setting).
func isConstName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	upper := false
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9' || r == '_':
		default:
			return false
		}
	}
	return upper
}

// pyLiteral reads one Python literal with an optional trailing comment.
func pyLiteral(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if q := s[0]; q == '\'' || q == '"' {
		if strings.HasPrefix(s, strings.Repeat(string(q), 3)) {
			return "", false // a triple-quoted string may span lines
		}
		end := strings.IndexByte(s[1:], q)
		if end < 0 || strings.Contains(s[1:end+1], `\`) {
			return "", false
		}
		if rest := strings.TrimSpace(s[end+2:]); rest != "" && rest[0] != '#' {
			return "", false
		}
		return s[1 : end+1], true
	}
	if i := strings.Index(s, "#"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	switch s {
	case "True":
		return "true", true
	case "False":
		return "false", true
	case "None":
		return "", true
	}
	t := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXnN") {
		return t, true
	}
	return "", false
}

func oneLineCut(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// tildePath shows a path under home as ~/...
func tildePath(p, home string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}
