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
	"ccm/internal/rawjson"
	"ccm/internal/synth"
	"ccm/purge/restore"
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

// checkEdits verifies the rewrite invariants between an input and its
// purged output, independently of how purge made it:
//
//   - output lines keep the input's order; every line is either an input
//     line byte for byte, an edit of the input line with the same uuid, or
//     a synthesised tool_result;
//   - an edited line keeps its key order (top level and message), every
//     value other than parentUuid, message.content, toolUseResult and an
//     attachment's attachment and rendered (whose strings may become stubs)
//     byte for byte, each remaining content block byte for byte or as a
//     stub (or a tool_result whose content became a stub; a string content
//     may become a stub whole), and adds no \u
//     escape of a non-ASCII character;
//   - lines without a uuid (summaries, snapshots, bad lines) are never
//     edited.
//
// It returns the number of edited lines.
func checkEdits(t testing.TB, in, out []byte) int {
	t.Helper()
	inLines, outLines := splitLines(in), splitLines(out)
	// Where each distinct line and each uuid occurs in the input.
	same := map[string][]int{}
	byU := map[string][]int{}
	for j, l := range inLines {
		same[string(l)] = append(same[string(l)], j)
		if isObject(l) {
			if u := gjson.GetBytes(l, "uuid").Str; u != "" {
				byU[u] = append(byU[u], j)
			}
		}
	}
	// next returns the first index in idx at or after pos, or -1.
	next := func(idx []int, pos int) int {
		for _, j := range idx {
			if j >= pos {
				return j
			}
		}
		return -1
	}
	pos := 0
	edited := 0
	for n, ol := range outLines {
		if j := next(same[string(ol)], pos); j >= 0 {
			pos = j + 1
			continue
		}
		if !isObject(ol) {
			t.Errorf("output line %d is not an input line and not a record: %.120q", n+1, ol)
			return edited
		}
		u := gjson.GetBytes(ol, "uuid").Str
		j := -1
		if u != "" {
			j = next(byU[u], pos)
		}
		if j < 0 {
			if isSynthResult(ol) {
				continue
			}
			t.Errorf("output line %d (uuid %q) matches no input line after input line %d: %.200q", n+1, u, pos, ol)
			return edited
		}
		pos = j + 1
		edited++
		diffLine(t, n+1, inLines[j], ol)
	}
	return edited
}

// diffLine checks one edited line against its original.
func diffLine(t testing.TB, n int, il, ol []byte) {
	t.Helper()
	a, b := gjson.ParseBytes(il), gjson.ParseBytes(ol)
	if ka, kb := topKeys(a), topKeys(b); strings.Join(ka, ",") != strings.Join(kb, ",") {
		t.Errorf("line %d: key order changed:\n  was %v\n  now %v", n, ka, kb)
		return
	}
	if e := nonASCIIEscapes(ol) - nonASCIIEscapes(il); e > 0 {
		t.Errorf("line %d: %d non-ASCII characters re-escaped as \\u", n, e)
	}
	a.ForEach(func(k, av gjson.Result) bool {
		bv := b.Get(gjson.Escape(k.Str))
		switch k.Str {
		case "parentUuid":
			if bv.Type != gjson.String && bv.Type != gjson.Null {
				t.Errorf("line %d: parentUuid became %s", n, bv.Raw)
			}
		case "toolUseResult", "attachment", "rendered":
			if !onlyStubsDiffer(av, bv) {
				t.Errorf("line %d: toolUseResult changed other than by stubs: %.200s", n, bv.Raw)
			}
		case "message":
			if ka, kb := topKeys(av), topKeys(bv); strings.Join(ka, ",") != strings.Join(kb, ",") {
				t.Errorf("line %d: message key order changed: %v -> %v", n, ka, kb)
			}
			av.ForEach(func(mk, mav gjson.Result) bool {
				mbv := bv.Get(gjson.Escape(mk.Str))
				if mk.Str == "content" {
					diffContent(t, n, mav, mbv)
				} else if mav.Raw != mbv.Raw {
					t.Errorf("line %d: message.%s changed", n, mk.Str)
				}
				return true
			})
		default:
			if av.Raw != bv.Raw {
				t.Errorf("line %d: %s changed: %.80s -> %.80s", n, k.Str, av.Raw, bv.Raw)
			}
		}
		return true
	})
}

// diffContent checks an edited content array: blocks removed (in order),
// blocks kept byte for byte, or replaced by stubs.
func diffContent(t testing.TB, n int, a, b gjson.Result) {
	t.Helper()
	if a.Raw == b.Raw {
		return
	}
	if a.Type == gjson.String && isStubValue(b) {
		return // replayed hook context stubbed whole
	}
	if !a.IsArray() || !b.IsArray() {
		t.Errorf("line %d: string content changed", n)
		return
	}
	if len(b.Array()) == 0 {
		t.Errorf("line %d: content became []", n)
	}
	ab := a.Array()
	i := 0
	for _, blk := range b.Array() {
		matched := false
		for ; i < len(ab); i++ {
			if blockEdit(ab[i], blk) {
				matched = true
				i++
				break
			}
		}
		if !matched {
			t.Errorf("line %d: content block is neither an original block nor its stub: %.200s", n, blk.Raw)
			return
		}
	}
}

// blockEdit reports whether blk is orig, or orig with its large parts
// stubbed.
func blockEdit(orig, blk gjson.Result) bool {
	if orig.Raw == blk.Raw {
		return true
	}
	switch orig.Get("type").Str {
	case "image":
		return isStubValue(blk)
	case "tool_result", "tool_use":
		// Same keys in the same order; changed values are stubs (or arrays
		// whose changed elements are).
		if strings.Join(topKeys(orig), ",") != strings.Join(topKeys(blk), ",") {
			return false
		}
		ok := true
		orig.ForEach(func(k, ov gjson.Result) bool {
			nv := blk.Get(gjson.Escape(k.Str))
			if ov.Raw == nv.Raw {
				return true
			}
			switch {
			case isStubValue(nv):
			case (k.Str == "id" || k.Str == "tool_use_id") && renamedID(ov.Str, nv.Str):
			case ov.IsArray() && nv.IsArray() && len(ov.Array()) == len(nv.Array()):
				oa, na := ov.Array(), nv.Array()
				for x := range oa {
					if oa[x].Raw != na[x].Raw && !isStubValue(na[x]) {
						ok = false
					}
				}
			case ov.IsObject() && nv.IsObject():
				// tool_use input: fields stubbed.
				if strings.Join(topKeys(ov), ",") != strings.Join(topKeys(nv), ",") {
					ok = false
				}
				ov.ForEach(func(ik, oiv gjson.Result) bool {
					niv := nv.Get(gjson.Escape(ik.Str))
					if oiv.Raw != niv.Raw && !isStubValue(niv) {
						ok = false
					}
					return true
				})
			default:
				ok = false
			}
			return ok
		})
		return ok
	}
	return false
}

// renamedID reports a duplicate tool id renamed by the repair: the old id
// with "_ccm" and hex digits appended.
func renamedID(old, id string) bool {
	rest, ok := strings.CutPrefix(id, old+"_ccm")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// invariants checks everything every purge output must satisfy, and
// purges the output once more to check idempotence. path holds out.
func (e *env) invariants(in []byte, path string, o Options, subagent bool) {
	e.t.Helper()
	out := readFile(e.t, path)
	mustCheck(e.t, out, subagent)
	checkEdits(e.t, in, out)
	if !subagent {
		keepsPrompts(e.t, in, out)
	}
	keepsRealResults(e.t, in, out)
	// Idempotence: purging the purged file changes nothing.
	rep, again := e.purge(path, o)
	if rep.Changed {
		e.t.Errorf("second purge reports a change: %+v", rep.Stats)
	}
	if !bytes.Equal(again, out) {
		e.t.Errorf("second purge changed the file (%d -> %d bytes)", len(out), len(again))
		reportFirstDiff(e.t, out, again)
	}
}

func reportFirstDiff(t testing.TB, a, b []byte) {
	t.Helper()
	al, bl := splitLines(a), splitLines(b)
	for i := 0; i < len(al) || i < len(bl); i++ {
		if i >= len(al) || i >= len(bl) || !bytes.Equal(al[i], bl[i]) {
			var x, y []byte
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			t.Errorf("first difference at line %d:\n  %.300s\n  %.300s", i+1, x, y)
			return
		}
	}
}

// rec is a record line built from fields in order, for hand-written
// fixtures: rec("uuid","u1","parentUuid",nil,...) with values marshalled
// as JSON unless they are json.RawMessage.
func rec(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		b.Write(k)
		b.WriteByte(':')
		switch v := kv[i+1].(type) {
		case json.RawMessage:
			b.Write(v)
		case raw:
			b.WriteString(string(v))
		default:
			enc, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			b.Write(enc)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// raw is JSON written as is into rec.
type raw string

// Hand-written record shapes (2.0.x style).

func userPrompt(uuid, parent, text string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "user",
		"message", raw(`{"role":"user","content":`+js(text)+`}`), "uuid", uuid, "timestamp", "2025-01-01T00:00:00.000Z")
}

func assistantText(uuid, parent, msgID, text string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"text","text":`+js(text)+`}]}`), "uuid", uuid)
}

func assistantThinking(uuid, parent, msgID, thinking, sig string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"thinking","thinking":`+js(thinking)+`,"signature":`+js(sig)+`}]}`), "uuid", uuid)
}

func assistantToolUse(uuid, parent, msgID, id, name string, input string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"tool_use","id":`+js(id)+`,"name":`+js(name)+`,"input":`+input+`}]}`), "uuid", uuid)
}

func toolResult(uuid, parent, id string, content string, extra ...any) string {
	kv := []any{"parentUuid", nullable(parent), "isSidechain", false, "type", "user",
		"message", raw(`{"role":"user","content":[{"tool_use_id":` + js(id) + `,"type":"tool_result","content":` + content + `}]}`), "uuid", uuid}
	return rec(append(kv, extra...)...)
}

func progress(uuid, parent string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "progress",
		"data", raw(`{"type":"hook_progress","hookEvent":"PostToolUse"}`), "uuid", uuid)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// js encodes a string as JSON with non-ASCII kept raw.
func js(s string) string {
	return string(rawjson.Append(nil, s))
}

// sig is a plausible base64 thinking signature.
const sig = "EqQBCkYIBxgCKkDZm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg=="

// lineOf returns the output line with this uuid (nil when absent).
func lineOf(data []byte, uuid string) []byte {
	return byUUID(data)[uuid]
}

// parentOf returns the parentUuid of the record with this uuid.
func parentOf(t testing.TB, data []byte, uuid string) string {
	t.Helper()
	l := lineOf(data, uuid)
	if l == nil {
		t.Fatalf("no record %s in the output", uuid)
	}
	return gjson.GetBytes(l, "parentUuid").Str
}

// stubsIn returns every stub in a line (decoded strings that are stubs).
func stubsIn(line []byte) []stub.Stub {
	var out []stub.Stub
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.IsObject() || v.IsArray():
			v.ForEach(func(_, c gjson.Result) bool { walk(c); return true })
		case v.Type == gjson.String:
			if st, ok := stub.Parse(v.Str); ok {
				out = append(out, st)
			}
		}
	}
	walk(gjson.ParseBytes(line))
	return out
}

// bigText returns n bytes of printable text with line breaks, which JSON
// encodes with \n escapes.
func bigText(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: lorem ipsum dolor sit amet\n", seed, i)
	}
	return b.String()[:n]
}

type bytesBuffer = bytes.Buffer

// restoreFile restores path with the options of the purge that made it.
func restoreFile(ctx context.Context, path string, o Options) (*restore.Report, error) {
	return restore.File(ctx, path, restoreOptions(o))
}

// restoreBackup brings back a backup with the options of the purge that
// made it.
func restoreBackup(ctx context.Context, path, from string, o Options) (*restore.Report, error) {
	return restore.FromBackup(ctx, path, from, restoreOptions(o))
}

// restoreOptions carries a purge's options over to a restore.
func restoreOptions(o Options) restore.Options {
	return restore.Options{Store: o.Store, LockDir: o.LockDir, LockWait: o.LockWait, DryRun: o.DryRun, Backup: o.Backup, Now: o.Now}
}
