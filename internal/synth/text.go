package synth

import (
	"math/rand/v2"
	"strconv"
)

// This file produces the free text of the transcript: prose for prompts,
// thinking and replies, and log-, code- and grep-style tool output. Words come
// from a fixed list of 256 entries so that one 64-bit draw picks eight words.
// The list deliberately holds characters that need JSON escaping (quotes,
// backslashes, tabs) and raw UTF-8 (accents, arrows, emoji, CJK), because
// Claude Code keeps non-ASCII unescaped and tools must round-trip both.

var words = [256]string{
	"the", "a", "to", "of", "and", "in", "is", "for", "that", "on",
	"with", "this", "it", "be", "as", "are", "not", "by", "from", "at",
	"file", "function", "error", "test", "value", "config", "request", "response", "handler", "session",
	"transcript", "record", "parent", "uuid", "chain", "tool", "result", "message", "content", "block",
	"cache", "blob", "prune", "purge", "check", "repair", "stream", "buffer", "line", "offset",
	"read", "write", "open", "close", "return", "nil", "err", "ctx", "context", "string",
	"int", "byte", "slice", "map", "struct", "interface", "package", "import", "func", "var",
	"const", "type", "range", "if", "else", "switch", "case", "default", "go", "defer",
	"build", "run", "vet", "fmt", "lint", "module", "version", "branch", "commit", "merge",
	"server", "client", "socket", "timeout", "retry", "backoff", "limit", "quota", "token", "usage",
	"input", "output", "stdin", "stdout", "stderr", "exit", "status", "code", "signal", "process",
	"worker", "queue", "job", "task", "agent", "hook", "event", "prompt", "reply", "model",
	"index", "key", "hash", "digest", "sha256", "zstd", "gzip", "compress", "decode", "encode",
	"parse", "format", "render", "print", "log", "debug", "info", "warn", "trace", "span",
	"path", "dir", "home", "user", "project", "repo", "src", "lib", "cmd", "internal",
	"now", "then", "first", "next", "last", "before", "after", "while", "until", "when",
	"should", "could", "would", "must", "may", "will", "can", "need", "want", "try",
	"small", "large", "fast", "slow", "new", "old", "empty", "full", "valid", "invalid",
	"one", "two", "three", "four", "ten", "100", "404", "0x1f", "3.14", "2026",
	"café", "naïve", "déjà", "résumé", "Zürich", "señor", "→", "✓", "—", "…",
	"🚀", "🎉", "日本語", "données", "über", "élan", "ça", "piñata", "crème", "brûlée",
	"\"quoted\"", "C:\\tmp\\x", "tab\there", "a/b", "<tag>", "&amp;", "50%", "$HOME", "#42", "@main",
	"x := y", "{}", "[]", "(nil)", "a.b.c", "k=v", "--flag", "-n", "~/.claude", "*.go",
	"alpha", "beta", "gamma", "delta", "epsilon", "lambda", "sigma", "omega", "kappa", "theta",
	"reader", "writer", "scanner", "decoder", "encoder", "planner", "walker", "builder", "store", "manifest",
	"orphan", "dangling", "torn", "sidechain", "compact", "summary",
}

// appendWords appends n space-separated words.
func appendWords(dst []byte, r *rand.Rand, n int) []byte {
	var x uint64
	for i := 0; i < n; i++ {
		if i%8 == 0 {
			x = r.Uint64()
		}
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, words[byte(x)]...)
		x >>= 8
	}
	return dst
}

// appendProse appends sentences of prose until about size bytes were added,
// with a paragraph break now and then.
func appendProse(dst []byte, r *rand.Rand, size int) []byte {
	dst = reserve(dst, size+256)
	end := len(dst) + size
	for len(dst) < end {
		dst = appendWords(dst, r, between(r, 5, 18))
		dst = append(dst, '.')
		if r.IntN(5) == 0 {
			dst = append(dst, '\n', '\n')
		} else {
			dst = append(dst, ' ')
		}
	}
	return dst
}

// appendProseWords appends n words of prose in sentences (thinking blocks are
// sized in words).
func appendProseWords(dst []byte, r *rand.Rand, n int) []byte {
	for n > 0 {
		k := min(n, between(r, 5, 18))
		dst = appendWords(dst, r, k)
		dst = append(dst, '.')
		n -= k
		if n > 0 {
			dst = append(dst, ' ')
		}
	}
	return dst
}

// Output styles for tool results.
const (
	styleLog  = iota // timestamped log lines (Bash)
	styleCode        // indented source lines (Read, Edit, Write)
	styleGrep        // path:line:match (Grep)
	styleDoc         // markdown prose (WebFetch, Task, MCP)
)

var levels = [4]string{"INFO ", "DEBUG", "WARN ", "ERROR"}

var openers = [8]string{"func ", "if ", "for ", "return ", "// ", "type ", "var ", "case "}

// appendOutput appends tool-output text of about size bytes in the given
// style, ending with a newline. lineNo counts lines for log/grep prefixes.
func appendOutput(dst []byte, r *rand.Rand, style, size int) []byte {
	dst = reserve(dst, size+512)
	end := len(dst) + size
	line := 1
	for len(dst) < end {
		switch style {
		case styleLog:
			dst = append(dst, "2026-01-"...)
			dst = strconv.AppendInt(dst, int64(10+line%18), 10)
			dst = append(dst, ' ')
			dst = strconv.AppendInt(dst, int64(10+line%13), 10)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, int64(10+line%49), 10)
			dst = append(dst, ' ')
			dst = append(dst, levels[r.IntN(4)]...)
			dst = append(dst, " ["...)
			dst = append(dst, words[20+r.IntN(120)]...)
			dst = append(dst, "] "...)
			dst = appendWords(dst, r, between(r, 3, 14))
		case styleCode:
			for d := r.IntN(4); d > 0; d-- {
				dst = append(dst, '\t')
			}
			dst = append(dst, openers[r.IntN(8)]...)
			dst = appendWords(dst, r, between(r, 1, 9))
			if r.IntN(3) == 0 {
				dst = append(dst, " {"...)
			}
		case styleGrep:
			dst = append(dst, "internal/"...)
			dst = append(dst, words[20+r.IntN(40)]...)
			dst = append(dst, ".go:"...)
			dst = strconv.AppendInt(dst, int64(1+r.IntN(900)), 10)
			dst = append(dst, ":\t"...)
			dst = appendWords(dst, r, between(r, 3, 12))
		default:
			if r.IntN(6) == 0 {
				dst = append(dst, "## "...)
			} else if r.IntN(4) == 0 {
				dst = append(dst, "- "...)
			}
			dst = appendWords(dst, r, between(r, 6, 20))
			dst = append(dst, '.')
		}
		dst = append(dst, '\n')
		line++
	}
	return dst
}

// appendNumbered appends src with "cat -n"-style line numbers and the arrow
// Claude Code's Read tool uses ("     1→text"). It returns dst and the number
// of lines.
func appendNumbered(dst, src []byte, first int) ([]byte, int) {
	dst = reserve(dst, len(src)+len(src)/2+64)
	n := 0
	for len(src) > 0 {
		i := 0
		for i < len(src) && src[i] != '\n' {
			i++
		}
		var nb [20]byte
		num := strconv.AppendInt(nb[:0], int64(first+n), 10)
		for p := len(num); p < 6; p++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, num...)
		dst = append(dst, "→"...)
		dst = append(dst, src[:i]...)
		dst = append(dst, '\n')
		n++
		if i < len(src) {
			i++
		}
		src = src[i:]
	}
	return dst, n
}

// countLines counts newline-terminated lines (a final partial line counts).
func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
