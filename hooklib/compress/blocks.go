package compress

import "strings"

// lineKind says what a transform may do with a line.
type lineKind uint8

const (
	prose    lineKind = iota // may be transformed
	verbatim                 // code fence, indented code, frontmatter: never touched
	diagram                  // inside a mermaid fence: removed at level 1
)

// line is one line of the input: its text without the line ending, the
// ending itself ("\n", "\r\n" or "" for the last line) and its kind.
type line struct {
	text string
	eol  string
	kind lineKind
}

// splitLines cuts s into lines and classifies them. Fences follow
// CommonMark: up to three spaces, then at least three backticks or tildes;
// the fence closes at a line of the same character, at least as long. An
// unclosed fence runs to the end, so nothing after a stray fence is ever
// rewritten as prose.
func splitLines(s string) []line {
	lines := make([]line, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		nl := strings.IndexByte(s, '\n')
		var l line
		if nl < 0 {
			l.text, s = s, ""
		} else {
			l.text, l.eol, s = s[:nl], "\n", s[nl+1:]
		}
		if strings.HasSuffix(l.text, "\r") {
			l.text = l.text[:len(l.text)-1]
			l.eol = "\r" + l.eol
		}
		lines = append(lines, l)
	}
	classify(lines)
	return lines
}

func classify(lines []line) {
	start := 0
	if n := frontmatterLines(lines); n > 0 {
		for i := 0; i < n; i++ {
			lines[i].kind = verbatim
		}
		start = n
	}
	var (
		fenceChar  byte
		fenceLen   int
		inFence    bool
		fenceKind  lineKind
		prevBlank  = true
		prevCode   bool
		inList     bool
		blankSince bool
	)
	for i := start; i < len(lines); i++ {
		t := lines[i].text
		if inFence {
			lines[i].kind = fenceKind
			if c, n, info := fence(t); n >= fenceLen && c == fenceChar && strings.TrimSpace(info) == "" {
				inFence = false
			}
			continue
		}
		if c, n, info := fence(t); n >= 3 {
			inFence, fenceChar, fenceLen = true, c, n
			fenceKind = verbatim
			if f := strings.Fields(info); len(f) > 0 && strings.EqualFold(f[0], "mermaid") {
				fenceKind = diagram
			}
			lines[i].kind = fenceKind
			prevBlank, prevCode = false, false
			continue
		}
		blank := strings.TrimSpace(t) == ""
		indented := strings.HasPrefix(t, "\t") || strings.HasPrefix(t, "    ")
		switch {
		case blank:
			lines[i].kind = prose
			prevBlank, blankSince = true, true
			continue
		case indented && (prevBlank || prevCode) && !inList:
			// Markdown indented code block: keep it byte for byte.
			lines[i].kind = verbatim
			prevCode, prevBlank = true, false
			continue
		}
		lines[i].kind = prose
		if isListItem(t) {
			inList = true
		} else if !indented && blankSince {
			inList = false
		}
		prevBlank, prevCode, blankSince = false, false, false
	}
}

// fence reports the fence character and length if t opens or closes a
// code fence, plus the rest of the line (the info string).
func fence(t string) (c byte, n int, info string) {
	i := 0
	for i < len(t) && i < 3 && t[i] == ' ' {
		i++
	}
	if i >= len(t) || (t[i] != '`' && t[i] != '~') {
		return 0, 0, ""
	}
	c = t[i]
	j := i
	for j < len(t) && t[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, ""
	}
	info = t[j:]
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return 0, 0, "" // a backtick fence's info string has no backticks
	}
	return c, j - i, info
}

// frontmatterLines returns how many lines a leading YAML frontmatter block
// (--- ... --- or ...) spans, or 0. A BOM before it is allowed.
func frontmatterLines(lines []line) int {
	if len(lines) < 2 || strings.TrimRight(strings.TrimPrefix(lines[0].text, "\uFEFF"), " \t") != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i].text, " \t"); t == "---" || t == "..." {
			return i + 1
		}
	}
	return 0
}

// isListItem reports whether t starts a markdown list item.
func isListItem(t string) bool {
	t = strings.TrimLeft(t, " \t")
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// joinLines reassembles lines, dropping runs of more than one empty prose
// line (agentihooks' "\n{3,}" → "\n\n", kept out of code).
func joinLines(lines []line, collapse bool) string {
	var b strings.Builder
	emptyRun := 0
	for _, l := range lines {
		if collapse && l.kind == prose && l.text == "" {
			emptyRun++
			if emptyRun > 1 {
				continue
			}
		} else {
			emptyRun = 0
		}
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.String()
}
