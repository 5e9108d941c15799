package main

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// examples are the real command lines each command's --help ends with,
// keyed by the command's full name. TestExamples walks the command tree:
// every command needs two or three, and every flag they use must exist.
var examples = map[string][]string{
	"ccm": {
		"ccm purge --dry-run testdata/sample-session.jsonl   # what a purge would do, writing nothing",
		"ccm sessions --sort size                            # the largest sessions first",
		"ccm install                                         # hooks and slash commands into ~/.claude",
	},
	"ccm analyze": {
		"ccm analyze testdata/sample-session.jsonl",
		"ccm analyze --current --top 20",
		"ccm analyze --json --no-tokens ~/.claude/projects/-home-me-src/SESSION.jsonl",
	},
	"ccm report": {
		"ccm report testdata/sample-session.jsonl -o session.html   # one session's page",
		"ccm report --current --open                                # this session, in the browser",
		"ccm report --all -o disk.html                              # every project's disk and the largest sessions",
	},
	"ccm audit": {
		"ccm audit --current                      # what fills this session's context",
		"ccm audit --session 4d5611e5-241a-462a-8d15-5122611a9569 --top 5",
		"ccm audit --json testdata/sample-session.jsonl",
	},
	"ccm tasks": {
		"ccm tasks                                # every cold-task summary kept for compaction",
		"ccm tasks --session 4d5611e5-241a-462a-8d15-5122611a9569 --json",
	},
	"ccm search": {
		`ccm search "connection refused" redis          # a phrase and a word, newest first`,
		"ccm search --regex 'panic: .*nil map' --in outputs --since 30d",
		"ccm search --project ~/src/app --tool Bash --limit 50 migrate",
	},
	"ccm mcp": {
		"ccm mcp                                  # serve on stdin/stdout (Claude Code starts it)",
		"ccm mcp --claude-dir ~/work/.claude      # the sessions of another config dir",
	},
	"ccm check": {
		"ccm check testdata/sample-session.jsonl",
		"ccm check --quiet ~/.claude/projects     # errors only, every transcript",
		"ccm check --strict --current             # warnings fail too",
	},
	"ccm purge": {
		"ccm purge --dry-run testdata/sample-session.jsonl",
		"ccm purge --current -v                   # this session, from inside Claude Code (/purge)",
		"ccm purge --all --older-than 72h --min-size 10MB",
	},
	"ccm restore": {
		"ccm restore SESSION.jsonl                # expand every stub from the store",
		"ccm restore --backup SESSION.jsonl       # the file as it was before the latest purge",
		"ccm restore --backup --from SESSION.jsonl.backup.20260101_120000.000 SESSION.jsonl",
	},
	"ccm export": {
		"ccm export 4d5611e5 -o session.tar.zst                 # one session, to move it",
		"ccm export --project ~/src/app -o s3://team-claude/sessions --redact",
		"ccm export --all --older-than 30d -o /mnt/backup/claude",
	},
	"ccm import": {
		"ccm import session.tar.zst --cwd ~/src/app             # resume it from ~/src/app here",
		"ccm import s3://team-claude/sessions 4d5611e5 --cwd . --new-id",
		"ccm import --dry-run session.tar.zst",
	},
	"ccm cache": {
		"ccm cache stats",
		"ccm cache get sha256:8f3a...             # the content a stub stands for",
		"make 2>&1 | ccm cache put --source 'make' --pin soft",
	},
	"ccm cache put": {
		"ccm cache put build.log",
		"make 2>&1 | ccm cache put --tool Bash --source 'make' --exit 2",
	},
	"ccm cache get": {
		"ccm cache get sha256:8f3a...",
		"ccm cache get --grep 'FAIL|panic' sha256:8f3a...",
		"ccm cache get --lines 100:140 sha256:8f3a...",
	},
	"ccm cache last": {
		"ccm cache last",
		"ccm cache last --info",
	},
	"ccm cache ls": {
		"ccm cache ls",
		"ccm cache ls -n 5 --json",
	},
	"ccm cache stats": {
		"ccm cache stats",
		"ccm cache stats --json",
	},
	"ccm cache verify": {
		"ccm cache verify                         # every blob; one line per damaged one, exit 1",
		"ccm cache verify sha256:8f3a...",
		"ccm cache verify --json",
	},
	"ccm pin": {
		"ccm pin sha256:8f3a...",
		"ccm pin --level hard --reason 'the failing test log' sha256:8f3a...",
		"ccm pin --last                           # the most recently stored blob",
	},
	"ccm unpin": {
		"ccm unpin sha256:8f3a...",
		"ccm unpin --last",
	},
	"ccm pins": {
		"ccm pins",
		"ccm pins --json",
	},
	"ccm prune": {
		"ccm prune --dry-run -v",
		"ccm prune --max-size-mb 200 --max-age-days 14",
		"ccm prune --gc-unreferenced              # blobs no transcript or backup mentions",
	},
	"ccm sessions": {
		"ccm sessions",
		"ccm sessions --sort size --project my-app",
		"ccm sessions --archived",
	},
	"ccm du": {
		"ccm du",
		"ccm du --json",
	},
	"ccm archive": {
		"ccm archive --dry-run",
		"ccm archive --older-than 30d --min-size 5MB",
		"ccm archive --project my-app --to /mnt/backup/claude",
	},
	"ccm unarchive": {
		"ccm unarchive 0f9c2d7e-5b1a-4c3e-9d2f-1a2b3c4d5e6f",
		"ccm unarchive --project my-app --touch",
	},
	"ccm clean": {
		"ccm clean --dry-run",
		"ccm clean --keep-backups 2 --backups-older-than 3d",
		"ccm clean --empty --orphans --temp",
	},
	"ccm maintain": {
		"ccm maintain --dry-run",
		"17 3 * * *  ccm maintain                 # crontab: nightly",
	},
	"ccm hook": {
		`echo '{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}' | ccm hook SessionStart`,
		`echo '{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"hi"}' | ccm hook`,
	},
	"ccm install": {
		"ccm install --dry-run -v                 # the changes and the resulting settings.json, nothing written",
		"ccm install --scope project              # the team's .claude/settings.json, calling ccm from PATH",
		"ccm install --scope local --no-capture",
	},
	"ccm uninstall": {
		"ccm uninstall",
		"ccm uninstall --scope project --dry-run",
	},
	"ccm config": {
		"ccm config",
		"CONTEXT_REFRESH_INTERVAL=10 ccm config   # see a value's source change",
	},
	"ccm compress": {
		"ccm compress --level standard CLAUDE.md",
		"cat rules.md | ccm compress --level aggressive --stats",
	},
	"ccm refresh": {
		"ccm refresh                              # every running session, on its next prompt",
		"ccm refresh --session 0f9c2d7e-5b1a-4c3e-9d2f-1a2b3c4d5e6f",
	},
	"ccm capture": {
		"ccm capture stats",
		"ccm capture stats --project my-app --json",
	},
	"ccm capture stats": {
		"ccm capture stats",
		"ccm capture stats --project my-app --json",
	},
	"ccm migrate": {
		"ccm migrate --dry-run                    # the plan: take over, import, leave",
		"ccm migrate --yes",
		"ccm migrate --undo                       # every file back as it was",
	},
	"ccm completion": {
		"ccm completion bash > ~/.local/share/bash-completion/completions/ccm",
		"source <(ccm completion zsh)",
	},
	"ccm memory": {
		"ccm memory list",
		"ccm memory clear",
	},
	"ccm memory list": {
		"ccm memory list",
		"ccm memory list --json",
	},
	"ccm memory clear": {
		"ccm memory clear",
		"CLAUDE_CONFIG_DIR=~/.claude-work ccm memory clear",
	},
}

func init() {
	// Every help text ends with the command's examples (Metadata
	// "examples", set by setExamples).
	const tail = `{{if .Metadata}}{{with index .Metadata "examples"}}
EXAMPLES:
{{.}}{{end}}{{end}}`
	cli.RootCommandHelpTemplate += tail
	cli.CommandHelpTemplate += tail
	cli.SubcommandHelpTemplate += tail
}

// setExamples gives every command of the tree its examples, indented for
// the help text; name is the command's full name ("ccm cache get").
func setExamples(cmd *cli.Command, name string) {
	if ex, ok := examples[name]; ok {
		if cmd.Metadata == nil {
			cmd.Metadata = map[string]any{}
		}
		cmd.Metadata["examples"] = "   " + strings.Join(ex, "\n   ") + "\n"
	}
	for _, sub := range cmd.Commands {
		setExamples(sub, name+" "+sub.Name)
	}
}
