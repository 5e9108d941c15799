package transcript

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// tx builds small transcripts line by line for rule tests.
type tx struct{ lines []string }

func (t *tx) add(format string, args ...any) *tx {
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
	return t
}

func parent(p string) string {
	if p == "" {
		return "null"
	}
	return `"` + p + `"`
}

// user adds a user prompt.
func (t *tx) user(id, par, text string) *tx {
	return t.add(`{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":%q},"uuid":%q}`, parent(par), text, id)
}

// asst adds one assistant line holding one block.
func (t *tx) asst(id, par, msgID, block string) *tx {
	return t.add(`{"parentUuid":%s,"isSidechain":false,"type":"assistant","message":{"id":%q,"role":"assistant","content":[%s],"usage":{"input_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}},"uuid":%q}`, parent(par), msgID, block, id)
}

// result adds a user tool_result record.
func (t *tx) result(id, par, toolID string) *tx {
	return t.add(`{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"ok"}]},"uuid":%q,"toolUseResult":{"stdout":"ok"}}`, parent(par), toolID, id)
}

func (t *tx) progress(id, par string) *tx {
	return t.add(`{"parentUuid":%s,"isSidechain":false,"type":"progress","data":{"type":"hook_progress"},"uuid":%q}`, parent(par), id)
}

func text(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }
func toolUse(id string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"ls"}}`, id)
}
func thinking(sig string) string {
	if sig == "" {
		return `{"type":"thinking","thinking":"hmm"}`
	}
	return fmt.Sprintf(`{"type":"thinking","thinking":"hmm","signature":%q}`, sig)
}

const sig = "EuYBCkYIBRgCKkBvalidlookingbase64signature0123456789"

func (t *tx) index(tb testing.TB) *Index {
	tb.Helper()
	ix, err := Build(strings.NewReader(strings.Join(t.lines, "\n")+"\n"), BuildOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// codes returns the finding codes as "line:code" strings.
func codes(fs []Finding, sev Severity) []string {
	var out []string
	for _, f := range fs {
		if f.Severity == sev {
			out = append(out, fmt.Sprintf("%d:%s", f.Line, f.Code))
		}
	}
	sort.Strings(out)
	return out
}

func wantCodes(t *testing.T, got []string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("findings %v, want %v", got, want)
	}
}

// base is a clean conversation with a parallel pair of tool calls whose
// second result hangs off the first tool_use line, as in real files.
func base() *tx {
	t := &tx{}
	t.user("u1", "", "hello")               // 1
	t.asst("a1", "u1", "m1", thinking(sig)) // 2
	t.asst("a2", "a1", "m1", toolUse("t1")) // 3
	t.asst("a3", "a2", "m1", toolUse("t2")) // 4
	t.progress("p1", "a3")                  // 5
	t.result("r1", "p1", "t1")              // 6
	t.result("r2", "a2", "t2")              // 7: off the walk, parent on it
	t.asst("a4", "r1", "m2", text("done"))  // 8
	return t
}

func TestCheckCleanWithParallelResult(t *testing.T) {
	ix := base().index(t)
	c := ix.ActiveChain()
	if len(c.Attached) != 1 || ix.Rec(c.Attached[0]).Line != 7 {
		t.Fatalf("attached %v, want line 7", c.Attached)
	}
	msgs := ix.Messages(c)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant" {
		t.Fatalf("roles %v", roles)
	}
	if len(msgs[2].Blocks) != 2 {
		t.Fatalf("the user message after the parallel calls holds %d results, want 2", len(msgs[2].Blocks))
	}
	wantCodes(t, codes(Check(ix, CheckOptions{}), Error))
	wantCodes(t, codes(Check(ix, CheckOptions{}), Warning))
}

func TestCheckOrphanToolUse(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "hello")
	tr.asst("a1", "u1", "m1", toolUse("t1"))
	tr.user("u2", "a1", "are you there?") // the result never came
	tr.asst("a2", "u2", "m2", text("yes"))
	ix := tr.index(t)
	wantCodes(t, codes(Check(ix, CheckOptions{}), Error), "2:orphan-tool-use")
}

func TestCheckToolUseInFlightIsAWarning(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "purge please")
	tr.asst("a1", "u1", "m1", toolUse("t1")) // ccm purge --current running now
	ix := tr.index(t)
	fs := Check(ix, CheckOptions{})
	wantCodes(t, codes(fs, Error))
	wantCodes(t, codes(fs, Warning), "2:tool-use-in-flight")
}

func TestCheckOrphanToolResult(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "hello")
	tr.asst("a1", "u1", "m1", text("hi"))
	tr.result("r1", "a1", "t9")
	tr.asst("a2", "r1", "m2", text("ok"))
	wantCodes(t, codes(Check(tr.index(t), CheckOptions{}), Error), "3:orphan-tool-result")
}

func TestCheckEmptyContentAndText(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "hello")
	tr.add(`{"parentUuid":"u1","type":"assistant","message":{"id":"m1","role":"assistant","content":[]},"uuid":"a1"}`)
	tr.asst("a2", "a1", "m1", text(""))
	tr.asst("a3", "a2", "m1", text("\n\n")) // Claude Code writes these; the client drops them
	tr.asst("a4", "a3", "m1", text("fine"))
	wantCodes(t, codes(Check(tr.index(t), CheckOptions{}), Error), "2:empty-content", "3:empty-text")
}

func TestCheckThinkingSignature(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "hello")
	tr.asst("a1", "u1", "m1", thinking(""))
	tr.asst("a2", "a1", "m1", thinking("[REDACTED_SIGNATURE]"))
	tr.asst("a3", "a2", "m1", text("hi"))
	fs := Check(tr.index(t), CheckOptions{})
	// The API rejects a placeholder signature as it does a missing one.
	wantCodes(t, codes(fs, Error), "2:thinking-unsigned", "3:thinking-fake-signature")
}

func TestCheckDanglingParent(t *testing.T) {
	tr := base()
	tr.lines[5] = strings.Replace(tr.lines[5], `"parentUuid":"p1"`, `"parentUuid":"gone"`, 1)
	ix := tr.index(t)
	c := ix.ActiveChain()
	if c.BrokenAt < 0 || ix.Rec(c.BrokenAt).Line != 6 {
		t.Fatalf("walk should break at line 6, broke at %d", c.BrokenAt)
	}
	fs := Check(ix, CheckOptions{})
	if got := codes(fs, Error); len(got) == 0 || got[0] != "6:dangling-parent" {
		t.Fatalf("errors %v, want 6:dangling-parent first", got)
	}
	// In a subagent file a parent outside the file is expected.
	for _, f := range Check(ix, CheckOptions{Subagent: true}) {
		if f.Code == "dangling-parent" {
			t.Fatalf("dangling parent reported in a subagent file")
		}
	}
}

func TestCheckRewindBranchIsOffChain(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "", "hello")
	tr.asst("a1", "u1", "m1", text("first answer"))
	tr.user("u2", "a1", "try something")     // rewound away
	tr.asst("a2", "u2", "m2", text("tried")) // rewound away
	tr.user("u3", "a1", "do this instead")   // the branch that stays
	tr.asst("a3", "u3", "m3", text("done"))
	ix := tr.index(t)
	fs := Check(ix, CheckOptions{})
	wantCodes(t, codes(fs, Error))
	wantCodes(t, codes(fs, Warning), "3:off-chain")
	if s := ix.TreeShape(); s.Roots != 1 || s.Leaves != 2 || s.Forks != 1 {
		t.Fatalf("shape %+v, want 1 root, 2 leaves, 1 fork", s)
	}
}

func TestCheckCycleEnds(t *testing.T) {
	tr := &tx{}
	tr.user("u1", "a2", "hello")
	tr.asst("a1", "u1", "m1", text("hi"))
	tr.user("u2", "a1", "again")
	tr.asst("a2", "u2", "m2", text("hi again"))
	ix := tr.index(t)
	if c := ix.ActiveChain(); !c.Cycle || len(c.Recs) != 4 {
		t.Fatalf("cycle %v, walk %d records", c.Cycle, len(c.Recs))
	}
	if got := codes(Check(ix, CheckOptions{}), Error); len(got) != 1 || !strings.HasSuffix(got[0], "parent-cycle") {
		t.Fatalf("errors %v, want one parent-cycle", got)
	}
}

func TestDuplicateUUIDs(t *testing.T) {
	tr := base()
	tr.add(`{"type":"saved_hook_context","uuid":"s1","content":"x"}`)
	tr.add(`{"type":"saved_hook_context","uuid":"s1","content":"y"}`) // by design
	tr.add(`{"parentUuid":"a4","type":"system","subtype":"turn_duration","uuid":"a4"}`)
	ix := tr.index(t)
	if len(ix.Dups) != 1 || ix.Rec(ix.Dups[0]).Line != 11 {
		t.Fatalf("duplicates at %v, want only line 11", ix.Dups)
	}
}
