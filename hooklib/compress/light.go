package compress

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// light is level 1: markdown formatting that carries no meaning goes.
// Mermaid diagrams become "[diagram removed]", tables become one
// "Header: cell | Header: cell" line per row (only where that costs no
// more tokens than the table: repeating the headers on every row of a wide
// table can cost more than the pipes it saves), headers become "[text]",
// thematic breaks go, and emphasis markers go (globs such as *.log stay).
func light(lines []line, c Counter) []line {
	out := make([]line, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l.kind == diagram:
			j := i
			for j+1 < len(lines) && lines[j+1].kind == diagram {
				j++
			}
			out = append(out, line{text: "[diagram removed]", eol: lines[j].eol, kind: prose})
			i = j
			continue
		case l.kind != prose:
			out = append(out, l)
			continue
		}
		if n := tableLen(lines, i); n > 0 {
			flat := flattenTable(lines[i : i+n])
			if c.Count(joinLines(flat, false)) <= c.Count(joinLines(lines[i:i+n], false)) {
				out = append(out, flat...)
			} else {
				out = append(out, lines[i:i+n]...)
			}
			i += n - 1
			continue
		}
		if isThematicBreak(l.text) {
			continue
		}
		if text, ok := headerText(l.text); ok {
			if text == "" {
				continue
			}
			l.text = "[" + text + "]"
		}
		l.text = stripEmphasis(l.text)
		out = append(out, l)
	}
	return out
}

// isThematicBreak: three or more of the same -, * or _, spaces allowed.
// YAML frontmatter never gets here: it is verbatim (agentihooks' rule
// regex hit its ---).
func isThematicBreak(t string) bool {
	t = strings.TrimSpace(t)
	if len(t) < 3 || (t[0] != '-' && t[0] != '*' && t[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case t[0]:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// headerText returns the text of an ATX header line ("## Title ##").
func headerText(t string) (string, bool) {
	s := strings.TrimLeft(t, " ")
	if len(t)-len(s) > 3 {
		return "", false
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return "", false
	}
	text := strings.TrimSpace(s[n:])
	if k := strings.TrimRight(text, "#"); len(k) < len(text) && (k == "" || strings.HasSuffix(k, " ")) {
		text = strings.TrimSpace(k)
	}
	return text, true
}

// tableLen returns how many lines the pipe table at lines[i] spans (header,
// separator and rows), or 0.
func tableLen(lines []line, i int) int {
	if i+1 >= len(lines) || lines[i+1].kind != prose || !isRow(lines[i].text) || !isSeparatorRow(lines[i+1].text) {
		return 0
	}
	n := 2
	for i+n < len(lines) && lines[i+n].kind == prose && isRow(lines[i+n].text) {
		n++
	}
	return n
}

func isRow(t string) bool {
	t = strings.TrimSpace(t)
	return len(t) >= 2 && t[0] == '|' && t[len(t)-1] == '|'
}

func isSeparatorRow(t string) bool {
	t = strings.TrimSpace(t)
	return isRow(t) && strings.Contains(t, "-") && strings.Trim(t, "|-: \t") == ""
}

// flattenTable turns a header, a separator and rows into one line per row.
// Cells are copied byte for byte; pairs with an empty header or cell go.
func flattenTable(rows []line) []line {
	head := cells(rows[0].text)
	var out []line
	for _, r := range rows[2:] {
		var parts []string
		for k, c := range cells(r.text) {
			if k < len(head) && head[k] != "" && c != "" {
				parts = append(parts, head[k]+": "+c)
			}
		}
		if len(parts) > 0 {
			out = append(out, line{text: strings.Join(parts, " | "), eol: r.eol, kind: prose})
		}
	}
	if len(out) > 0 {
		out[len(out)-1].eol = rows[len(rows)-1].eol
	}
	return out
}

// cells splits a table row on the pipes that are not escaped and not
// inside inline code.
func cells(t string) []string {
	t = strings.TrimSpace(t)
	t = t[1 : len(t)-1]
	var out []string
	start, inCode := 0, false
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\':
			i++
		case t[i] == '`':
			inCode = !inCode
		case t[i] == '|' && !inCode:
			out = append(out, strings.TrimSpace(t[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(t[start:]))
}

// stripEmphasis removes matched *, **, ***, _, __ and ___ delimiters at
// token edges. A delimiter belongs to emphasis only if what it wraps starts
// with a letter or digit and contains no path or glob characters, so
// "*.log", "**/*.go" and "a * b" are left alone (agentihooks' italic
// regex turned "Delete *.log and *.tmp" into "Delete .log and .tmp").
func stripEmphasis(s string) string {
	if !strings.ContainsAny(s, "*_") {
		return s
	}
	lx := lex(s)
	type opener struct {
		idx int
		c   byte
		n   int
	}
	var stack []opener
	cutL := make([]int, len(lx.toks))
	cutR := make([]int, len(lx.toks))
	changed := false
	for i := range lx.toks {
		t := &lx.toks[i]
		if t.span {
			continue
		}
		core := t.core
		lc, ln := delimRun(core)
		tc, tn := delimRunEnd(core)
		if ln+tn >= len(core) {
			continue // nothing but delimiters
		}
		inner := core[ln : len(core)-tn]
		if strings.ContainsAny(inner, "*?/") || strings.HasPrefix(inner, ".") {
			continue
		}
		if ln > 0 {
			if r := firstRune(inner); unicode.IsLetter(r) || unicode.IsDigit(r) {
				stack = append(stack, opener{i, lc, ln})
			}
		}
		if tn > 0 {
			r, _ := utf8.DecodeLastRuneInString(inner)
			if !unicode.IsSpace(r) {
				for k := len(stack) - 1; k >= 0; k-- {
					if stack[k].c == tc && stack[k].n == tn {
						cutL[stack[k].idx] = stack[k].n
						cutR[i] = tn
						stack = append(stack[:k], stack[k+1:]...)
						changed = true
						break
					}
				}
			}
		}
	}
	if !changed {
		return s
	}
	for i := range lx.toks {
		t := &lx.toks[i]
		t.core = t.core[cutL[i] : len(t.core)-cutR[i]]
	}
	return lx.String()
}

func delimRun(s string) (byte, int) {
	if s == "" || (s[0] != '*' && s[0] != '_') {
		return 0, 0
	}
	n := 0
	for n < len(s) && n < 3 && s[n] == s[0] {
		n++
	}
	return s[0], n
}

func delimRunEnd(s string) (byte, int) {
	if s == "" || (s[len(s)-1] != '*' && s[len(s)-1] != '_') {
		return 0, 0
	}
	c := s[len(s)-1]
	n := 0
	for n < len(s) && n < 3 && s[len(s)-1-n] == c {
		n++
	}
	return c, n
}
