package capture

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// field is where a tool_response keeps the content ccm may replace: a
// string member, or an array of strings (file lists) that the model reads
// one per line.
type field struct {
	path  string
	array bool
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
			if !r.IsObject() || r.Get("isImage").Bool() {
				return field{}, nil, false
			}
			out, errs := r.Get("stdout"), r.Get("stderr")
			if out.Type != gjson.String {
				return field{}, nil, false
			}
			if errs.Type == gjson.String && len(errs.Str) > len(out.Str) {
				return field{path: "stderr"}, []byte(errs.Str), true
			}
			return field{path: "stdout"}, []byte(out.Str), true
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
			if r.Get("type").String() != "text" {
				return field{}, nil, false // images, PDFs, notebooks: their own shapes (D3 #29)
			}
			c := r.Get("file.content")
			if c.Type != gjson.String {
				return field{}, nil, false
			}
			return field{path: "file.content"}, []byte(c.Str), true
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
			if c := r.Get("content"); c.Type == gjson.String {
				return field{path: "content"}, []byte(c.Str), true
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
