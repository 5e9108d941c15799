package bundle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/prune"
	"ccm/sessions"
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

// record redacts one JSONL record but for the values that locate its
// project (its cwd, a relocation's or a worktree's paths): the import
// moves those from the project's path to --cwd, which it cannot do once
// they are redacted, and the bundle names that path anyway (its member
// names hold the project folder, its manifest the project).
func (r *Redactor) record(line []byte) []byte {
	keep := locations(bytes.TrimRight(line, "\r\n"))
	if len(keep) == 0 {
		return r.bytes(line)
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Index < keep[j].Index })
	out := make([]byte, 0, len(line))
	pos := 0
	for _, v := range keep {
		out = append(out, r.bytes(line[pos:v.Index])...)
		pos = v.Index + len(v.Raw)
		out = append(out, line[v.Index:pos]...)
	}
	return append(out, r.bytes(line[pos:])...)
}

// Copy writes r's bytes to w with every match replaced. JSONL (jsonl set)
// is redacted a line at a time (but for the values that locate its
// project: see record), and a record that was valid JSON must
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
			out := r.record(line)
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

// maxRedactContent bounds a stored content read whole to be redacted.
const maxRedactContent = 256 << 20

// redaction makes the redacted copies of the stored content a session's
// transcripts name, in a scratch store the bundle is packed from: each
// content is redacted after the keys inside it (a region moved into the
// store holds stubs of its own) are replaced by their redacted content's,
// so a stub always names content the bundle carries.
type redaction struct {
	red   *Redactor
	from  *ccm.Store // the store; nil: no content
	to    *ccm.Store // the scratch store
	batch *ccm.Batch
	keys  map[ccm.Key]ccm.Key // a key -> its redacted content's
	// stored are the redacted contents' keys, which the bundle must carry.
	stored []ccm.Key
}

func newRedaction(red *Redactor, from *ccm.Store, dir string) (*redaction, error) {
	to, err := ccm.Open(dir)
	if err != nil {
		return nil, err
	}
	return &redaction{red: red, from: from, to: to, batch: to.NewBatch(), keys: map[ccm.Key]ccm.Key{}}, nil
}

// transcripts redacts the content of every key the session's
// transcripts name, and returns the replacer of old keys by new ones.
func (r *redaction) transcripts(ctx context.Context, files []sessions.File) (*strings.Replacer, error) {
	refs := &prune.KeyCollector{}
	for _, f := range files {
		if strings.Contains(f.Path, ".jsonl") {
			if err := copyFile(f.Path, refs); err != nil {
				return nil, err
			}
		}
	}
	var pairs []string
	for _, k := range sortedKeys(refs.Refs) {
		nk, err := r.key(ctx, k, 0)
		if err != nil {
			return nil, err
		}
		if nk != k {
			pairs = append(pairs, string(k), string(nk))
		}
	}
	return strings.NewReplacer(pairs...), nil
}

// key returns the key of k's redacted content, stored in the scratch
// store; k itself when the store does not have it (the stub stays a stub).
func (r *redaction) key(ctx context.Context, k ccm.Key, depth int) (ccm.Key, error) {
	if nk, ok := r.keys[k]; ok {
		return nk, nil
	}
	if depth > 64 {
		return "", fmt.Errorf("--redact: %s: stored content nested more than 64 deep", k)
	}
	r.keys[k] = k
	if r.from == nil {
		return k, nil
	}
	rc, meta, err := r.from.Export(ctx, k)
	if errors.Is(err, ccm.ErrNotFound) || errors.Is(err, ccm.ErrNoStore) {
		return k, nil
	}
	if err != nil {
		return "", fmt.Errorf("stored content %s: %w", k, err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxRedactContent+1))
	rc.Close()
	if err != nil {
		return "", fmt.Errorf("stored content %s: %w", k, err)
	}
	if len(data) > maxRedactContent {
		return "", fmt.Errorf("--redact: stored content %s is over %d MB", k, maxRedactContent>>20)
	}
	inner := &prune.KeyCollector{}
	inner.Write(data)
	var pairs []string
	for _, ik := range sortedKeys(inner.Refs) {
		nk, err := r.key(ctx, ik, depth+1)
		if err != nil {
			return "", err
		}
		if nk != ik {
			pairs = append(pairs, string(ik), string(nk))
		}
	}
	out := data
	if len(pairs) > 0 {
		out = []byte(strings.NewReplacer(pairs...).Replace(string(data)))
	}
	out = r.red.bytes(out)
	pin, reason := meta.Pinned.Level, meta.Pinned.Reason
	nk := k
	if bytes.Equal(out, data) {
		// Unchanged: under its own key (a b2s key too).
		err = r.batch.PutChecked(ctx, k, out, meta.Source, pin, reason)
	} else {
		nk, err = r.batch.Put(ctx, out, meta.Source, pin, reason)
	}
	if err != nil {
		return "", err
	}
	r.keys[k] = nk
	r.stored = append(r.stored, nk)
	return nk, nil
}

// commit makes the redacted content readable for the pack.
func (r *redaction) commit() error { return r.batch.Commit() }

// check refuses a bundle in which a redacted content is not referenced
// any more: a pattern cut into the store key of a stub, whose content
// would be lost.
func (r *redaction) check(list []string) error {
	refs := map[string]bool{}
	for _, k := range list {
		refs[k] = true
	}
	for _, nk := range r.stored {
		if !refs[string(nk)] {
			return errors.New("--redact: a pattern matched a store key in a stub: its content would be lost (make the pattern more specific)")
		}
	}
	return nil
}

func sortedKeys(refs prune.Refs) []ccm.Key {
	out := make([]ccm.Key, 0, len(refs))
	for k := range refs {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// copyFile streams a file into w.
func copyFile(path string, w io.Writer) error {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
