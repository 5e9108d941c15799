package migrate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/hooklib/coldtask"
	"ccm/hooklib/memory"
	"ccm/internal/fsutil"
)

// detectData plans the data: the old CCM store, tool memory, summaries,
// compact instructions, the old slash commands and hook scripts.
func (o Options) detectData(p *Plan) {
	store := filepath.Join(o.ClaudeDir, "cache", "ccm")
	if fi, err := os.Lstat(store); err == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(store)
			if _, err := os.Stat(store); err != nil {
				p.add("leave", CCM, "CCM store %s is a symlink to %s, which cannot be read (%v)", store, target, err)
			} else {
				p.add("use in place", CCM, "CCM store %s (a symlink to %s): ccm reads its blobs, sha256: and b2s: keys, through the link", store, target)
			}
		case !fi.IsDir():
			p.add("leave", CCM, "%s is not a directory", store)
		default:
			if _, err := os.ReadDir(store); err != nil {
				p.add("leave", CCM, "CCM store %s cannot be read: %v", store, err)
			} else {
				p.add("use in place", CCM, "CCM store %s is where ccm keeps its own: its blobs and stubs stay readable (ccm cache get, ccm restore)", store)
			}
		}
	}
	// Tool memory: the file agentihooks wrote, when ccm reads another.
	to := p.cfg.Path("AGENTICORE_TOOL_MEMORY_PATH")
	from := filepath.Join(o.UserHome, ".agenticore_tool_memory.ndjson")
	if from != to {
		if fi, err := os.Stat(from); err == nil && fi.Mode().IsRegular() {
			if n, err := missingLessons(from, to); err != nil {
				p.add("leave", Agentihook, "tool memory %s cannot be read: %v", from, err)
			} else if n > 0 {
				p.ToolMemoryFrom, p.ToolMemoryTo = from, to
				p.add("import", Agentihook, "%d lessons of the tool memory %s into %s", n, from, to)
			}
		} else if err == nil {
			p.add("leave", Agentihook, "tool memory %s is not a regular file", from)
		}
	}
	// claude-agentic-framework's pre-computed task summaries.
	sumDir := filepath.Join(o.ClaudeDir, "data", "compressed_context")
	if names, err := filepath.Glob(filepath.Join(sumDir, "*.json")); err == nil && len(names) > 0 {
		sort.Strings(names)
		p.SummaryDir = coldtask.Dir(o.Home) // where ccm tasks and the preservation block read them
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(p.SummaryDir, filepath.Base(n))); err == nil {
				continue
			}
			if !json.Valid(readOr(n)) {
				p.add("leave", CAF, "summary %s is not valid JSON, not imported", n)
				continue
			}
			p.Summaries = append(p.Summaries, n)
		}
		if len(p.Summaries) > 0 {
			p.add("import", CAF, "%d compressed-context summaries from %s into %s", len(p.Summaries), sumDir, p.SummaryDir)
		}
	} else if _, err := os.Stat(sumDir); err != nil && !os.IsNotExist(err) {
		p.add("leave", CAF, "%s cannot be read: %v", sumDir, err)
	}
	if ci := filepath.Join(o.ClaudeDir, "compact-instructions.txt"); exists(ci) {
		p.add("leave", CCM, "%s: Claude Code does not pass PreCompact output to the summariser; put lasting instructions in CLAUDE.md", ci)
	}
	// claude-context-manager's slash commands have ccm's names.
	cmdDir := filepath.Join(o.ClaudeDir, "commands")
	for _, n := range []string{"ccm.md", "purge.md", "pin-last.md", "pin-next.md", "pin-start.md", "pin-end.md"} {
		f := filepath.Join(cmdDir, n)
		b := readOr(f)
		if bytes.Contains(b, []byte("claude-session-purge.py")) || bytes.Contains(b, []byte("ccm-get.py")) || bytes.Contains(b, []byte("claude-cache-prune.py")) {
			p.OldCommands = append(p.OldCommands, f)
			p.add("take over", CCM, "slash command %s: replaced by ccm's", f)
		}
	}
	hooks := filepath.Join(o.ClaudeDir, "hooks")
	if ents, err := os.ReadDir(hooks); err == nil {
		n := 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".py") {
				n++
			}
		}
		if n > 0 {
			p.add("leave", CCM, "%d hook scripts in %s stay where they are (no longer registered once migrated)", n, hooks)
		}
	}
	if aghome := agentihooksHome(o); exists(aghome) {
		p.add("leave", Agentihook, "%s stays: its .env files are still read below ccm's config.env", aghome)
	}
}

func agentihooksHome(o Options) string {
	if v, ok := o.Lookup("AGENTIHOOKS_HOME"); ok && v != "" {
		return o.expand(v)
	}
	return filepath.Join(o.UserHome, ".agentihooks")
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// readOr reads a regular file whole, nil when it cannot.
func readOr(p string) []byte {
	b, _ := fsutil.ReadRegular(p, maxFile)
	return b
}

// quoteEnv quotes a config.env value that holds spaces, # or quotes.
func quoteEnv(s string) string {
	if strings.ContainsAny(s, " #\t\"'") {
		return "'" + s + "'"
	}
	return s
}

// missingLessons counts the lessons of the NDJSON store from that the one
// at to does not hold.
func missingLessons(from, to string) (int, error) {
	old, err := (&memory.Store{Path: from}).List()
	if err != nil {
		return 0, err
	}
	have, err := (&memory.Store{Path: to}).List()
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, e := range have {
		seen[e.Key()] = true
	}
	n := 0
	for _, e := range old {
		if !seen[e.Key()] {
			seen[e.Key()] = true
			n++
		}
	}
	return n, nil
}
