package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// Redacted replaces every match of a redaction pattern.
const Redacted = "[REDACTED]"

// Redactor replaces what matches its patterns in what leaves the machine.
type Redactor struct {
	File     string // where the patterns came from
	patterns []*regexp.Regexp
	// Matches counts the replacements made.
	Matches int64
}

// LoadRedactor reads patterns from file: one regular expression (Go's
// RE2 syntax) a line; empty lines and lines starting with '#' are
// skipped. A file with no pattern, or a pattern that does not compile, is
// an error naming its line.
func LoadRedactor(file string) (*Redactor, error) {
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--redact: no patterns file %s (one regular expression a line; CCM_REDACT_FILE names another)", file)
		}
		return nil, fmt.Errorf("--redact: %v", err)
	}
	defer f.Close()
	r := &Redactor{File: file}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("--redact: %s:%d: %v", file, n, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("--redact: %s:%d: the pattern matches the empty string", file, n)
		}
		r.patterns = append(r.patterns, re)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--redact: %s: %v", file, err)
	}
	if len(r.patterns) == 0 {
		return nil, fmt.Errorf("--redact: %s holds no pattern", file)
	}
	return r, nil
}

// Note is what a bundle's manifest says of the redaction (never the
// patterns themselves: they may be the secrets).
func (r *Redactor) Note() []string {
	return []string{fmt.Sprintf("%d patterns of %s", len(r.patterns), r.File), fmt.Sprintf("%d matches replaced with %s", r.Matches, Redacted)}
}

// bytes replaces every match in b.
func (r *Redactor) bytes(b []byte) []byte {
	for _, re := range r.patterns {
		n := 0
		b = re.ReplaceAllFunc(b, func([]byte) []byte { n++; return []byte(Redacted) })
		r.Matches += int64(n)
	}
	return b
}

// Copy writes r's bytes to w with every match replaced. JSONL (jsonl set)
// is redacted a line at a time, and a record that was valid JSON must
// stay valid (a pattern that cuts into an escape sequence is an error);
// other files are redacted whole (up to 256 MB).
func (r *Redactor) Copy(w io.Writer, src io.Reader, jsonl bool) error {
	if !jsonl {
		data, err := io.ReadAll(io.LimitReader(src, 256<<20+1))
		if err != nil {
			return err
		}
		if len(data) > 256<<20 {
			return errors.New("--redact: a file over 256 MB that is not a transcript")
		}
		_, err = w.Write(r.bytes(data))
		return err
	}
	br := bufio.NewReaderSize(src, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			out := r.bytes(line)
			if len(out) != len(line) || !bytes.Equal(out, line) {
				body := bytes.TrimRight(line, "\r\n")
				if gjson.ValidBytes(body) && !gjson.ValidBytes(bytes.TrimRight(out, "\r\n")) {
					return errors.New("--redact: a pattern cut into a JSON escape sequence and would break a record: make it match whole words")
				}
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
