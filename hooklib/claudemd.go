package hooklib

import (
	"bytes"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"ccm/internal/fsutil"
)

// MemoryFile is one CLAUDE.md-like file to re-inject.
type MemoryFile struct {
	Path string
	Text string // line ends normalised, BOM removed
}

// MemoryFiles returns, in order, the global CLAUDE.md, then the project's
// CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md, skipping missing,
// empty, binary and duplicate ones (the same path, or the same content).
func MemoryFiles(claudeDir, projectDir string) []MemoryFile {
	paths := []string{filepath.Join(claudeDir, "CLAUDE.md")}
	if projectDir != "" {
		paths = append(paths,
			filepath.Join(projectDir, "CLAUDE.md"),
			filepath.Join(projectDir, ".claude", "CLAUDE.md"),
			filepath.Join(projectDir, "CLAUDE.local.md"))
	}
	var files []MemoryFile
	seenPath := map[string]bool{}
	seenHash := map[[32]byte]bool{}
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if seenPath[real] {
				continue
			}
			seenPath[real] = true
		}
		data, err := fsutil.ReadRegular(p, maxRuleFile)
		if err != nil || len(data) > maxRuleFile || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(strings.TrimPrefix(string(data), "\uFEFF"), "\r\n", "\n"))
		if text == "" {
			continue
		}
		if h := ContentHash(text); !seenHash[h] {
			seenHash[h] = true
			files = append(files, MemoryFile{Path: p, Text: text})
		}
	}
	return files
}

// Sections splits markdown at its ATX headers (outside code fences): each
// section is a header and what follows it, the first may be a preamble.
func Sections(text string) []string {
	var out []string
	lines := strings.SplitAfter(text, "\n")
	start, inFence := 0, false
	var fenceMark string
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case inFence:
			if strings.HasPrefix(strings.TrimSpace(t), fenceMark) {
				inFence = false
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			inFence, fenceMark = true, t[:3]
		case strings.HasPrefix(t, "#") && i > start && isHeader(t):
			out = append(out, strings.TrimRight(strings.Join(lines[start:i], ""), "\n"))
			start = i
		}
	}
	if last := strings.TrimRight(strings.Join(lines[start:], ""), "\n"); last != "" {
		out = append(out, last)
	}
	return out
}

func isHeader(t string) bool {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n <= 6 && n < len(t) && (t[n] == ' ' || t[n] == '\t')
}

// CutMarker names where the full text is after a cut.
func CutMarker(paths []string) string {
	return "[... cut to fit the size limit; full text in " + strings.Join(paths, ", ") + "]"
}

// RenderMemory lays out header and the files within budget (measured by
// Size). compress is applied to each section. Files go in whole sections; at
// the first section that does not fit the text is cut there, at a section
// boundary (agentihooks' hard cut dropped whole parts of a profile
// mid-sentence, docs/earlier-tools.md), and a marker names the files whose
// full text is not in the payload. A first section that alone does not fit is
// cut at a paragraph or line boundary.
func RenderMemory(header string, files []MemoryFile, budget int, compress func(string) string) string {
	if len(files) == 0 {
		return ""
	}
	var all []string
	for _, f := range files {
		all = append(all, f.Path)
	}
	var b strings.Builder
	b.WriteString(header)
	used := Size(header)
	for fi, f := range files {
		label := "\n\n[" + f.Path + "]\n"
		reserve := Size("\n\n" + CutMarker(all[fi:]))
		if used+Size(label)+reserve > budget {
			return finishCut(&b, all[fi:], budget)
		}
		b.WriteString(label)
		used += Size(label)
		for si, sec := range Sections(f.Text) {
			piece := compress(sec)
			if si > 0 {
				piece = "\n\n" + piece
			}
			if used+Size(piece) <= budget-reserve {
				b.WriteString(piece)
				used += Size(piece)
				continue
			}
			if si == 0 {
				part := cutAtBoundary(piece, budget-reserve-used)
				b.WriteString(part)
				used += Size(part)
			}
			return finishCut(&b, all[fi:], budget)
		}
	}
	return b.String()
}

func finishCut(b *strings.Builder, paths []string, budget int) string {
	s := strings.TrimRight(b.String(), "\n") + "\n\n" + CutMarker(paths)
	if Size(s) > budget {
		return "" // not even the header and the marker fit
	}
	return s
}

// cutAtBoundary returns a prefix of s of at most n (by Size), ending at a
// blank line or, failing that, a line end when one is in the second half.
func cutAtBoundary(s string, n int) string {
	cut := cutToFit(s, n)
	if len(cut) == len(s) {
		return cut
	}
	if i := strings.LastIndex(cut, "\n\n"); i > len(cut)/2 {
		return cut[:i]
	}
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
		return cut[:i]
	}
	return cut
}
