package purge

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// toolInfo is what a stub says about the tool call whose output it holds.
type toolInfo struct {
	Name, Detail, Desc, FilePath, Command string
}

// source renders the stub's source line: the tool and its file path, command
// or pattern, with $HOME shown as ~ (claude-context-manager's version 2
// stubs).
func (t toolInfo) source() string {
	name := t.Name
	if name == "" {
		name = "unknown tool"
	}
	if t.Detail == "" {
		return name
	}
	return name + " " + t.Detail
}

// home is the user's home directory, looked up on first use (package
// initialisation runs in every `ccm hook` process).
var home = sync.OnceValue(func() string { h, _ := os.UserHomeDir(); return h })

func tildePath(p string) string {
	home := home()
	if home != "" && home != "/" && strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}

// cut folds white space and shortens s to about n bytes. The result is
// always a new string, never a view into s.
func cut(s string, n int) string {
	s = strings.Join(append(strings.Fields(s), ""), " ")
	s = strings.TrimSuffix(s, " ")
	if len(s) <= n {
		return strings.Clone(s)
	}
	// Cut on a rune boundary.
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n]) + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// toolInfoOf summarises a tool_use block's input. Every string is a copy:
// the block points into a line buffer that the next line reuses.
func toolInfoOf(block gjson.Result) toolInfo {
	name := strings.Clone(block.Get("name").Str)
	in := block.Get("input")
	t := toolInfo{Name: name}
	str := func(k string) string { return strings.Clone(in.Get(k).Str) }
	switch {
	case str("file_path") != "":
		t.FilePath = str("file_path")
		t.Detail = tildePath(t.FilePath)
	case str("notebook_path") != "":
		t.FilePath = str("notebook_path")
		t.Detail = tildePath(t.FilePath)
	case str("command") != "":
		t.Command = str("command")
		t.Detail = cut(t.Command, 80)
		t.Desc = cut(str("description"), 120)
	case str("pattern") != "":
		t.Detail = "pattern=" + cut(str("pattern"), 60)
		if p := str("path"); p != "" {
			t.Detail += " in " + tildePath(p)
		}
	case str("url") != "":
		t.Detail = cut(str("url"), 60)
	case str("query") != "":
		t.Detail = "query=" + cut(str("query"), 60)
	case str("description") != "":
		t.Detail = cut(str("description"), 60)
	case str("prompt") != "":
		t.Detail = cut(str("prompt"), 50)
	}
	return t
}

// exitRe is compiled on first use, not in every process that links purge.
var exitRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`exit[: ](\d+)`) })

// exitCode finds "exit N" in the first 100 bytes of an output, as
// claude-context-manager did; 0 when there is none.
func exitCode(raw []byte) int {
	head := raw[:min(len(raw), 100)]
	if m := exitRe().FindSubmatch(head); m != nil {
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	return 0
}

// inputFields are the large string fields of tool_use inputs that purge
// may move to the store, by tool.
var inputFields = map[string][]string{
	"Write":        {"content"},
	"Edit":         {"old_string", "new_string"},
	"MultiEdit":    {"edits"},
	"NotebookEdit": {"new_source"},
}
