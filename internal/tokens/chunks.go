package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// chunkLen returns the length in bytes of the cl100k pre-tokenizer chunk
// starting at s[i]. It implements, alternative by alternative and with the
// same backtracking outcome, the pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// A test checks it against tiktoken-go on generated text.
func chunkLen(s string, i int) int {
	// 1. contractions
	if s[i] == '\'' && i+1 < len(s) {
		rest := s[i+1:]
		if len(rest) >= 2 {
			two := strings.ToLower(rest[:2])
			if two == "re" || two == "ve" || two == "ll" {
				return 3
			}
		}
		switch rest[0] | 0x20 {
		case 's', 't', 'm', 'd':
			return 2
		}
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	// 2. an optional non-letter, non-digit, non-newline, then letters
	if unicode.IsLetter(r) {
		return w + letters(s, i+w)
	}
	if r != '\r' && r != '\n' && !unicode.IsNumber(r) && i+w < len(s) {
		if r2, _ := utf8.DecodeRuneInString(s[i+w:]); unicode.IsLetter(r2) {
			return w + letters(s, i+w)
		}
	}
	// 3. one to three digits
	if unicode.IsNumber(r) {
		j, n := i, 0
		for j < len(s) && n < 3 {
			rr, ww := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsNumber(rr) {
				break
			}
			j += ww
			n++
		}
		return j - i
	}
	// 4. an optional space, punctuation/symbols, trailing newlines
	j := i
	if r == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		rr, ww := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(rr) || unicode.IsLetter(rr) || unicode.IsNumber(rr) {
			break
		}
		k += ww
	}
	if k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k - i
	}
	// 5-7. whitespace runs
	end, lastNL, lastStart := i, -1, i
	for end < len(s) {
		rr, ww := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(rr) {
			break
		}
		lastStart = end
		end += ww
		if rr == '\r' || rr == '\n' {
			lastNL = end
		}
	}
	if lastNL > i {
		return lastNL - i // \s*[\r\n]+ ends at the run's last newline
	}
	if end > i {
		if end == len(s) || lastStart == i {
			return end - i // \s+(?!\S) at the end, or a lone \s+
		}
		return lastStart - i // \s+(?!\S) gives back the last space
	}
	return w
}

// letters returns the byte length of the run of letters at s[i:].
func letters(s string, i int) int {
	j := i
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += w
	}
	return j - i
}
