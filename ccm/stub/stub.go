package stub

import (
	"strconv"
	"strings"

	"ccm/ccm"
)

// The markers. A stub is the text block that replaces stored content in a
// transcript or a tool output.
const (
	Start = "[CCM_CACHED]"
	End   = "[/CCM_CACHED]"
)

// Stub is the content of a [CCM_CACHED] block. String writes the v2 field
// set of claude-context-manager, which every reader of that tool understands;
// Parse also reads v1 (path line) and v3 (~tokens, key on an outer
// "Retrieve:" line) stubs.
type Stub struct {
	Key    ccm.Key
	Source string // "Bash ls -la", "Read ~/src/x.go", "Image (PNG)"
	Desc   string // optional description (Bash description, Task)
	Bytes  int64  // real bytes of the stored content
	Lines  int    // number of '\n' in it
	Exit   int    // exit code; written only when not 0
	Pinned ccm.PinLevel
}

// String renders the stub: one "name: value" line per field between the
// markers, the last one "get: ccm cache get KEY", no trailing newline. Line breaks in Source and Desc become
// spaces so they cannot end the block early.
func (st Stub) String() string {
	var b strings.Builder
	b.WriteString(Start)
	b.WriteString("\nkey: ")
	b.WriteString(string(st.Key))
	src := oneLine(st.Source)
	if src == "" {
		src = "unknown"
	}
	b.WriteString("\nsource: ")
	b.WriteString(src)
	if d := oneLine(st.Desc); d != "" {
		b.WriteString("\ndesc: ")
		b.WriteString(d)
	}
	b.WriteString("\nbytes: ")
	b.WriteString(strconv.FormatInt(st.Bytes, 10))
	b.WriteString("\nlines: ")
	b.WriteString(strconv.Itoa(st.Lines))
	if st.Exit != 0 {
		b.WriteString("\nexit: ")
		b.WriteString(strconv.Itoa(st.Exit))
	}
	b.WriteString("\npinned: ")
	b.WriteString(st.Pinned.String())
	// How to get the content back, for whoever reads the stub (a person, the
	// model). Readers of the field set, ccm's and claude-context-manager's, skip a
	// name they do not know.
	b.WriteString("\nget: ccm cache get ")
	b.WriteString(string(st.Key))
	b.WriteString("\n")
	b.WriteString(End)
	return b.String()
}

// Is reports whether text is a stub, as claude-context-manager's is_ccm_stub
// decided: it starts with the start marker (after white space) and holds
// the end marker.
func Is(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, Start) && strings.Contains(t, End)
}

// Parse reads a stub that makes up text (leading white space and an
// outer "Retrieve:" line allowed). It reports false when text is not a
// stub or its key is missing or malformed: a stub's key comes from outside
// and is validated like any other.
func Parse(text string) (Stub, bool) {
	if !Is(text) {
		return Stub{}, false
	}
	ms := Find(text)
	if len(ms) == 0 || strings.TrimSpace(text[:ms[0].Start]) != "" {
		return Stub{}, false
	}
	return ms[0].Stub, true
}

// Match is a stub found inside a larger text: text[Start:End] is the
// block, including an outer "Retrieve:" line when that line holds the key.
type Match struct {
	Start, End int
	Stub       Stub
}

// Find returns every stub in text with a valid key, in order. text is
// decoded text (a JSON string's value), not raw JSON, where line breaks
// would still be written as \n.
func Find(text string) []Match {
	var out []Match
	pos := 0
	for {
		i := strings.Index(text[pos:], Start)
		if i < 0 {
			return out
		}
		start := pos + i
		j := strings.Index(text[start:], End)
		if j < 0 {
			return out
		}
		end := start + j + len(End)
		// A start marker repeated before the end marker: the block is the
		// innermost one.
		if k := strings.LastIndex(text[start:start+j], Start); k > 0 {
			start += k
		}
		st, hasKey := parseFields(text[start+len(Start) : end-len(End)])
		if !hasKey {
			if k, n := retrieveKey(text[end:]); k != "" {
				st.Key, hasKey = k, true
				end += n
			}
		}
		if hasKey {
			out = append(out, Match{Start: start, End: end, Stub: st})
		}
		pos = end
	}
}

// parseFields reads the "name: value" lines of a block. It reports whether
// a valid key was among them.
func parseFields(body string) (Stub, bool) {
	var st Stub
	hasKey := false
	for _, line := range strings.Split(body, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(name) {
		case "key":
			if k, err := ccm.ParseKey(value); err == nil {
				st.Key, hasKey = k, true
			}
		case "path":
			// v1 named the blob file; its key line is authoritative, the path
			// is only a fallback and is reduced to the key it names.
			if !hasKey {
				base := value[strings.LastIndexAny(value, `/\`)+1:]
				hexPart, _, _ := strings.Cut(base, ".")
				if k, ok := ccm.KeyFromHex(hexPart); ok {
					st.Key, hasKey = k, true
				}
			}
		case "source":
			st.Source = value
		case "desc":
			st.Desc = value
		case "bytes":
			st.Bytes, _ = strconv.ParseInt(value, 10, 64)
		case "lines":
			st.Lines, _ = strconv.Atoi(value)
		case "exit":
			st.Exit, _ = strconv.Atoi(value)
		case "pinned":
			st.Pinned, _ = ccm.ParsePinLevel(value)
		}
	}
	return st, hasKey
}

// retrieveKey reads the key from a v3 outer line directly after a block,
// "Retrieve: ccm-get.py <key> [...]", and returns it with the length of
// text it spans.
func retrieveKey(after string) (ccm.Key, int) {
	rest := strings.TrimLeft(after, " \t\r\n")
	skipped := len(after) - len(rest)
	if strings.Count(after[:skipped], "\n") > 1 || !strings.HasPrefix(rest, "Retrieve:") {
		return "", 0
	}
	line, _, _ := strings.Cut(rest, "\n")
	for _, tok := range strings.Fields(line) {
		tok = strings.Trim(tok, "`'\",;()[]")
		if k, err := ccm.ParseKey(tok); err == nil {
			return k, skipped + len(line)
		}
	}
	return "", 0
}

// oneLine turns line breaks into spaces so a value cannot break a stub
// into several lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}
