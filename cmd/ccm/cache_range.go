package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// lineSelect is what part of stored content `ccm cache get` prints: a line
// range, the first or last N lines, or the lines matching a regular
// expression (numbered, as grep -n, so that --lines can follow). Lines are
// numbered from 1, as in the capture stub; a last line without a newline
// counts.
type lineSelect struct {
	From, To   int // --lines A:B, inclusive; To 0 means the end
	Head, Tail int
	Grep       *regexp.Regexp
}

// active reports whether any selection was asked for.
func (s *lineSelect) active() bool {
	return s != nil && (s.From > 0 || s.Head > 0 || s.Tail > 0 || s.Grep != nil)
}

// parseLineSelect checks the flags: at most one selection, well-formed.
func parseLineSelect(lines, grep string, head, tail int, headSet, tailSet bool) (*lineSelect, error) {
	n := 0
	for _, set := range []bool{lines != "", grep != "", headSet, tailSet} {
		if set {
			n++
		}
	}
	if n > 1 {
		return nil, usagef("give one of --lines, --grep, --head, --tail")
	}
	s := &lineSelect{}
	switch {
	case lines != "":
		a, b, ok := strings.Cut(lines, ":")
		if !ok {
			return nil, usagef("--lines %q: want A:B (1-based, inclusive; A: to the end, :B from the start)", lines)
		}
		from, to := 1, 0
		var err error
		if a != "" {
			if from, err = strconv.Atoi(a); err != nil || from < 1 {
				return nil, usagef("--lines %q: the first line must be a number of 1 or more", lines)
			}
		}
		if b != "" {
			if to, err = strconv.Atoi(b); err != nil || to < 1 {
				return nil, usagef("--lines %q: the last line must be a number of 1 or more", lines)
			}
			if to < from {
				return nil, usagef("--lines %q: the last line comes before the first", lines)
			}
		}
		s.From, s.To = from, to
	case grep != "":
		re, err := regexp.Compile(grep)
		if err != nil {
			return nil, usagef("--grep: %v", err)
		}
		s.Grep = re
	case headSet:
		if head < 1 {
			return nil, usagef("--head %d: want 1 or more lines", head)
		}
		s.Head = head
	case tailSet:
		if tail < 1 {
			return nil, usagef("--tail %d: want 1 or more lines", tail)
		}
		s.Tail = tail
	}
	return s, nil
}

// write copies the selected lines of r to w, byte for byte. A range that
// starts after the last line is an error (exit 2), so a wrong guess is not
// mistaken for empty content.
func (s *lineSelect) write(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	var ring [][]byte // --tail
	n, matched := 0, false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			switch {
			case s.Head > 0:
				if n > s.Head {
					return bw.Flush()
				}
				bw.Write(line)
			case s.Tail > 0:
				if len(ring) == s.Tail {
					ring = append(ring[:0], ring[1:]...)
				}
				ring = append(ring, line)
			case s.Grep != nil:
				if s.Grep.Match(bytes.TrimSuffix(line, []byte{'\n'})) {
					matched = true
					bw.WriteString(strconv.Itoa(n))
					bw.WriteByte(':')
					bw.Write(line)
				}
			default:
				if n >= s.From && (s.To == 0 || n <= s.To) {
					bw.Write(line)
				}
				if s.To > 0 && n >= s.To {
					return bw.Flush()
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	for _, l := range ring {
		bw.Write(l)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if s.From > n {
		return fmt.Errorf("--lines: line %d is past the end: the content has %d lines", s.From, n)
	}
	if s.Grep != nil && !matched {
		return silentError{code: exitFindings}
	}
	return nil
}
