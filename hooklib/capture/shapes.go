package capture

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// field is where a tool_response keeps the content ccm may replace: a
// string member, or an array of strings (file lists) that the model reads
// one per line.
type field struct {
	path  string
	array bool
	// blocks: the whole response is a list of MCP content blocks, all
	// text; the replacement is one text block.
	blocks bool
	// start and end delimit a string field's raw value in the
	// tool_response, for the splice that replaces it.
	start, end int
}

// stringMember finds a string member of a raw object.
func stringMember(raw, key string) (field, string, bool) {
	v, off, ok := Member(raw, key)
	if !ok || len(v) < 2 || v[0] != '"' {
		return field{}, "", false
	}
	return field{path: key, start: off, end: off + len(v)}, v, true
}

// decoded returns a string field with its decoded content.
func decoded(f field, raw string) (field, []byte, bool) {
	b, ok := rawjson.Unquote(raw)
	return f, b, ok
}

// shape is what ccm knows about one tool's output. Only tools whose
// tool_response shape was observed with Claude Code 2.1.330, and whose
// replacement the client accepted, have one (README, "Live capture").
type shape struct {
	skip     func(Call) string
	pick     func(resp gjson.Result) (field, []byte, bool)
	describe func(Call, *Capture)
	// full, when set, returns the whole output when the client itself
	// cut what the hook received, or nil.
	full func(c Call, shown []byte) []byte
}

var shapes = map[string]shape{
	// {"stdout","stderr","interrupted","isImage","noOutputExpected"}
	"Bash": {
		skip: func(c Call) string {
			cmd := c.Input.Get("command").String()
			if isCCMCommand(cmd) {
				return SkipCCM
			}
			if Trivial(cmd) {
				return SkipTrivial
			}
			return ""
		},
		pick: func(r gjson.Result) (field, []byte, bool) {
			if img, _, _ := Member(r.Raw, "isImage"); img == "true" {
				return field{}, nil, false
			}
			f, v, ok := stringMember(r.Raw, "stdout")
			if !ok {
				return field{}, nil, false
			}
			if fe, e, ok := stringMember(r.Raw, "stderr"); ok && len(e) > len(v) {
				f, v = fe, e
			}
			return decoded(f, v)
		},
		describe: func(c Call, cp *Capture) {
			cp.Command = c.Input.Get("command").String()
			cp.Source = "Bash " + oneLine(cp.Command, 200)
			cp.Stat = CommandPattern(cp.Command)
			if cp.field.path == "stderr" {
				cp.Source += " (stderr)"
			}
		},
		full: persistedOutput,
	},
	// {"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}
	"Read": {
		skip: func(c Call) string {
			if c.Input.Get("offset").Exists() || c.Input.Get("limit").Exists() {
				return SkipPaging // the model is already paging
			}
			if bypassed(c.Input.Get("file_path").String()) {
				return SkipBypass
			}
			return ""
		},
		pick: func(r gjson.Result) (field, []byte, bool) {
			if t, _, _ := Member(r.Raw, "type"); t != `"text"` {
				return field{}, nil, false // images, PDFs, notebooks: their own shapes (docs/earlier-tools.md)
			}
			file, off, ok := Member(r.Raw, "file")
			if !ok {
				return field{}, nil, false
			}
			f, v, ok := stringMember(file, "content")
			if !ok {
				return field{}, nil, false
			}
			f.path, f.start, f.end = "file.content", f.start+off, f.end+off
			return decoded(f, v)
		},
		describe: func(c Call, cp *Capture) {
			cp.File = c.Input.Get("file_path").String()
			cp.Source = "Read " + oneLine(cp.File, 200)
			ext := filepath.Ext(cp.File)
			if ext == "" {
				ext = filepath.Base(cp.File)
			}
			cp.Stat = "*" + ext
		},
		full: wholeFile,
	},
	// {"filenames":[...],"durationMs","numFiles","truncated",...}
	"Glob": {
		skip: func(Call) string { return "" },
		pick: func(r gjson.Result) (field, []byte, bool) {
			return pickArray(r, "filenames")
		},
		describe: func(c Call, cp *Capture) {
			cp.Pattern = c.Input.Get("pattern").String()
			cp.Source = "Glob " + oneLine(cp.Pattern, 200)
			cp.Stat = "Glob"
		},
	},
	// files_with_matches: {"mode","filenames":[...],"numFiles"};
	// content and count: {"mode","content":"...","numLines",...}
	"Grep": {
		skip: func(Call) string { return "" },
		pick: func(r gjson.Result) (field, []byte, bool) {
			if f, v, ok := stringMember(r.Raw, "content"); ok {
				return decoded(f, v)
			}
			return pickArray(r, "filenames")
		},
		describe: func(c Call, cp *Capture) {
			cp.Pattern = c.Input.Get("pattern").String()
			cp.Source = "Grep " + oneLine(cp.Pattern, 200)
			cp.Stat = "Grep " + r(c.Input.Get("output_mode").String(), "files_with_matches")
		},
	},
}

// mcpShape is every MCP tool's: Claude Code 2.1.330 hands PostToolUse
// the result's content blocks, [{"type":"text","text":"..."}, ...]. Only
// results made of text blocks are captured (images and resources pass
// through); the stored content is their texts joined by newlines, and
// the replacement is one text block. An MCP error result fires
// PostToolUseFailure instead.
var mcpShape = shape{
	skip: func(Call) string { return "" },
	pick: func(r gjson.Result) (field, []byte, bool) {
		if !r.IsArray() {
			return field{}, nil, false
		}
		var texts []string
		ok := true
		r.ForEach(func(_, b gjson.Result) bool {
			t := b.Get("text")
			if b.Get("type").String() != "text" || t.Type != gjson.String {
				ok = false
				return false
			}
			texts = append(texts, t.Str)
			return true
		})
		if !ok || len(texts) == 0 {
			return field{}, nil, false
		}
		return field{blocks: true}, []byte(strings.Join(texts, "\n")), true
	},
	describe: func(c Call, cp *Capture) {
		cp.Source = c.Tool
		if in := c.Input.Raw; in != "" && len(in) <= 200 {
			cp.Source += " " + oneLine(in, 200)
		}
		cp.Stat = c.Tool
	},
}

func r(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pickArray reads an array of strings as the lines the model reads.
func pickArray(resp gjson.Result, path string) (field, []byte, bool) {
	a := resp.Get(path)
	if !a.IsArray() {
		return field{}, nil, false
	}
	var b strings.Builder
	ok := true
	i := 0
	a.ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.String {
			ok = false
			return false
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(v.Str)
		i++
		return true
	})
	if !ok {
		return field{}, nil, false
	}
	return field{path: path, array: true}, []byte(b.String()), true
}

// isCCMCommand reports whether a command runs ccm itself (`ccm cache get`
// and friends): capturing what the model asked ccm for would only hand it
// another stub.
func isCCMCommand(cmd string) bool {
	f := strings.Fields(cmd)
	for i, w := range f {
		if i > 3 {
			break
		}
		if strings.Contains(w, "=") && i == 0 {
			continue
		}
		return filepath.Base(w) == "ccm"
	}
	return false
}

// oneLine flattens s to one line of at most n bytes (cut on a rune).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !startsRune(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }
