package purge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/synth"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// env is one purge test's world: a transcript directory, a CCM store and
// a lock directory, all inside the test's temp dir.
type env struct {
	t     testing.TB
	dir   string // holds the transcripts
	store *ccm.Store
	root  string // the store's root
	locks string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, dir: filepath.Join(base, "projects", "-tmp-proj"), root: filepath.Join(base, "store"), locks: filepath.Join(base, "locks")}
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := ccm.Open(e.root)
	if err != nil {
		t.Fatal(err)
	}
	e.store = st
	return e
}

// opts returns the default options wired to this env's store and locks.
func (e *env) opts() Options {
	o := DefaultOptions()
	o.Store = e.store
	o.LockDir = e.locks
	return o
}

// write puts data in a new transcript file and returns its path.
func (e *env) write(name string, data []byte) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// purge runs File on path and returns the report and the new content.
func (e *env) purge(path string, o Options) (*Report, []byte) {
	e.t.Helper()
	rep, err := File(context.Background(), path, o)
	if err != nil {
		e.t.Fatalf("purge %s: %v", filepath.Base(path), err)
	}
	return rep, readFile(e.t, path)
}

// purgeBytes writes data to a fresh file, purges it and returns the result.
func (e *env) purgeBytes(data []byte, o Options) (*Report, []byte) {
	e.t.Helper()
	e.t.Helper()
	p := e.write(fmt.Sprintf("s%d.jsonl", time.Now().UnixNano()), data)
	return e.purge(p, o)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readBackup returns a backup's original bytes, whatever its kind.
func readBackup(t testing.TB, path string) []byte {
	t.Helper()
	b, err := rewrite.ReadBackup(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gen runs the synthetic generator into memory.
func gen(t testing.TB, o synth.Options) ([]byte, synth.Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := synth.Generate(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// jsonl joins records into a transcript, one per line.
func jsonl(lines ...string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}

// splitLines splits data into lines without their "\n"; a last line
// without one is kept.
func splitLines(data []byte) [][]byte {
	ls := bytes.Split(data, []byte{'\n'})
	if len(ls) > 0 && len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func isObject(line []byte) bool {
	return json.Valid(line) && gjson.ParseBytes(line).IsObject()
}

// byUUID returns the first line carrying each uuid.
func byUUID(data []byte) map[string][]byte {
	m := map[string][]byte{}
	for _, l := range splitLines(data) {
		if !isObject(l) {
			continue
		}
		if u := gjson.GetBytes(l, "uuid").Str; u != "" {
			if _, ok := m[u]; !ok {
				m[u] = l
			}
		}
	}
	return m
}

// index builds the engine's index of data.
func index(t testing.TB, data []byte) *transcript.Index {
	t.Helper()
	ix, err := transcript.Build(bytes.NewReader(data), transcript.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// checkErrors returns the Error findings of ccm check on data.
func checkErrors(t testing.TB, data []byte, subagent bool) []transcript.Finding {
	t.Helper()
	var errs []transcript.Finding
	for _, f := range transcript.Check(index(t, data), transcript.CheckOptions{Subagent: subagent}) {
		if f.Severity == transcript.Error {
			errs = append(errs, f)
		}
	}
	return errs
}

// mustCheck fails the test when data has Error findings.
func mustCheck(t testing.TB, data []byte, subagent bool) {
	t.Helper()
	if errs := checkErrors(t, data, subagent); len(errs) > 0 {
		for i, f := range errs {
			if i == 10 {
				t.Errorf("... %d more", len(errs)-10)
				break
			}
			t.Errorf("check: line %d: %s: %s", f.Line, f.Code, f.Text)
		}
	}
}

// isUserPrompt tells a human prompt from tool results, meta records and
// compaction summaries, by reading the line itself.
func isUserPrompt(l []byte) bool {
	r := gjson.ParseBytes(l)
	if r.Get("type").Str != "user" || r.Get("isMeta").Bool() || r.Get("isCompactSummary").Bool() || r.Get("isSidechain").Bool() {
		return false
	}
	c := r.Get("message.content")
	if c.Type == gjson.String {
		return strings.TrimSpace(c.Str) != ""
	}
	text := false
	c.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "text" && strings.TrimSpace(b.Get("text").Str) != "" {
			text = true
		}
		return true
	})
	return text
}

// chainPrompts returns the uuids of the user prompts on the active chain.
func chainPrompts(t testing.TB, data []byte) map[string]bool {
	t.Helper()
	ix := index(t, data)
	c := ix.ActiveChain()
	lines := objectLines(data)
	out := map[string]bool{}
	for _, i := range c.Recs {
		if isUserPrompt(lines[i]) {
			out[ix.Rec(i).UUID()] = true
		}
	}
	return out
}

// objectLines returns the lines that are JSON objects, in order: the
// records, indexed as transcript.Index indexes them.
func objectLines(data []byte) [][]byte {
	var out [][]byte
	rd := transcript.NewReader(bytes.NewReader(data))
	for {
		l, err := rd.Next()
		if err != nil {
			return out
		}
		if l.Kind == transcript.Object {
			out = append(out, append([]byte(nil), l.Body()...))
		}
	}
}

// keepsPrompts fails when a prompt on in's active chain is not on out's.
func keepsPrompts(t testing.TB, in, out []byte) {
	t.Helper()
	before, after := chainPrompts(t, in), chainPrompts(t, out)
	for u := range before {
		if !after[u] {
			t.Errorf("user prompt %s was on the active chain and is not any more", u)
		}
	}
}

// topKeys returns an object's keys in order.
func topKeys(r gjson.Result) []string {
	var ks []string
	r.ForEach(func(k, _ gjson.Result) bool {
		ks = append(ks, k.Str)
		return true
	})
	return ks
}

// nonASCIIEscapes counts \uXXXX escapes of characters >= 0x80 in a raw
// JSON text: a rewrite that re-serialises non-ASCII text adds them.
func nonASCIIEscapes(b []byte) int {
	n := 0
	for i := 0; i+5 < len(b); i++ {
		if b[i] == '\\' {
			if b[i+1] == 'u' {
				var v int
				if _, err := fmt.Sscanf(string(b[i+2:i+6]), "%04x", &v); err == nil && v >= 0x80 {
					n++
				}
			}
			i++ // skip the escaped character
		}
	}
	return n
}

// isSynthResult reports a tool_result record ccm synthesised.
func isSynthResult(l []byte) bool {
	r := gjson.ParseBytes(l)
	if r.Get("type").Str != "user" {
		return false
	}
	c := r.Get("message.content")
	if !c.IsArray() || len(c.Array()) == 0 {
		return false
	}
	ok := true
	c.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str != "tool_result" || !b.Get("is_error").Bool() || !strings.Contains(b.Get("content").Str, "result lost") {
			ok = false
		}
		return ok
	})
	return ok
}

// isStubValue reports a JSON value that is a stub: a stub string, or a
// text block holding one.
func isStubValue(v gjson.Result) bool {
	if v.Type == gjson.String {
		return stub.Is(v.Str)
	}
	return v.IsObject() && v.Get("type").Str == "text" && stub.Is(v.Get("text").Str)
}

// onlyStubsDiffer reports whether b is a, or a stub, or an object with
// a's keys in a's order (or an array of a's length) whose values differ
// from a's only by stubs.
func onlyStubsDiffer(a, b gjson.Result) bool {
	if a.Raw == b.Raw || isStubValue(b) {
		return true
	}
	if a.IsArray() && b.IsArray() {
		ae, be := a.Array(), b.Array()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !onlyStubsDiffer(ae[i], be[i]) {
				return false
			}
		}
		return true
	}
	if !a.IsObject() || !b.IsObject() || strings.Join(topKeys(a), ",") != strings.Join(topKeys(b), ",") {
		return false
	}
	ok := true
	a.ForEach(func(k, av gjson.Result) bool {
		ok = onlyStubsDiffer(av, b.Get(gjson.Escape(k.Str)))
		return ok
	})
	return ok
}
