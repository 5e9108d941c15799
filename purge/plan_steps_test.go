package purge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm"
)

// planFixture is a session with one of each decision: a progress record
// (dropped, its child relinked), a thinking-only record of an earlier turn
// (dropped), a large Bash output before the recent window (stubbed), a
// call without a result (a result added) and two recent turns that stay.
func planFixture() []byte {
	out := bigText("build", 9000)
	return jsonl(
		userPrompt("u1", "", "run the build"),                                                           // line 1
		assistantThinking("a1", "u1", "m1", "let me think", sig),                                        // line 2: dropped
		assistantToolUse("a2", "a1", "m1", "t1", "Bash", `{"command":"make","description":"Build it"}`), // line 3: relinked to u1
		progress("p1", "a2"),                                                   // line 4: dropped
		toolResult("r1", "p1", "t1", js(out)),                                  // line 5: relinked to a2, stubbed
		assistantText("a3", "r1", "m2", "built"),                               // line 6
		userPrompt("u2", "a3", "now lint"),                                     // line 7
		assistantToolUse("a4", "u2", "m3", "t2", "Bash", `{"command":"lint"}`), // line 8: no result
		userPrompt("u3", "a4", "and test"),                                     // line 9
		assistantText("a5", "u3", "m4", "ok"),                                  // line 10
	)
}

// The dry run lists every decision with its line, where and why, and the
// keys it names are the keys a real purge then writes.
func TestDryRunPrintsThePlan(t *testing.T) {
	e := newEnv(t)
	in := planFixture()
	path := e.write("plan.jsonl", in)
	o := e.opts()
	o.DryRun = true
	rep, got := e.purge(path, o)
	if string(got) != string(in) {
		t.Fatal("the dry run changed the file")
	}
	if files := blobFiles(t, e.root); len(files) > 0 {
		t.Fatalf("the dry run stored something: %v", files)
	}
	type want struct {
		line   int
		action string
		where  string // prefix
	}
	wants := []want{
		{2, "drop", ""},
		{3, "relink", "parentUuid -> u1 (line 1)"},
		{4, "drop", ""},
		{5, "relink", "parentUuid -> a2 (line 3)"},
		{5, "stub", "message.content[0].content"},
		{8, "add", "after this line: tool results for t2"},
		{9, "relink", "parentUuid -> "},
	}
	if len(rep.Plan) != len(wants) {
		t.Fatalf("plan has %d steps, want %d:\n%s", len(rep.Plan), len(wants), stepsText(rep.Plan))
	}
	for i, w := range wants {
		s := rep.Plan[i]
		if s.Line != w.line || s.Action != w.action || !strings.HasPrefix(s.Where, w.where) || s.Why == "" {
			t.Errorf("step %d = %+v, want line %d %s %q…", i, s, w.line, w.action, w.where)
		}
	}
	if !strings.Contains(rep.Plan[0].Why, "thinking") || !strings.Contains(rep.Plan[2].Why, "progress") {
		t.Errorf("drop reasons: %q, %q", rep.Plan[0].Why, rep.Plan[2].Why)
	}
	if w := rep.Plan[6].Where; !strings.HasSuffix(w, "(a record the purge adds)") {
		t.Errorf("line 9 relinked to %q, want the added result record", w)
	}
	st := rep.Plan[4]
	if st.Bytes != int64(len(js(bigText("build", 9000)))) || !strings.Contains(st.Why, "--old-threshold 1000") {
		t.Errorf("stub step %+v: want the output's %d bytes and the old threshold as its reason", st, len(js(bigText("build", 9000))))
	}

	// The real purge executes that plan: the same stub, under the same key.
	o.DryRun = false
	rep2, out := e.purge(path, o)
	if rep2.Plan != nil {
		t.Error("a real purge's report carries the plan")
	}
	stubs := stubsIn(lineOf(out, "r1"))
	if len(stubs) != 1 || string(stubs[0].Key) != st.Key {
		t.Fatalf("purged line's stubs %+v, the plan said key %s", stubs, st.Key)
	}
	content, err := e.store.Get(context.Background(), ccm.Key(st.Key))
	if err != nil {
		t.Fatal(err)
	}
	if want := gjson.GetBytes(lineOf(in, "r1"), "message.content.0.content").Raw; string(content) != want {
		t.Error("the stored value is not the bytes the plan named")
	}
}

// blobFiles lists the files under a store root, if it exists.
func blobFiles(t *testing.T, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func stepsText(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(s.Action + " line " + strconv.Itoa(s.Line) + " " + s.Where + ": " + s.Why + "\n")
	}
	return b.String()
}

// A line that changes between the plan and its execution (another program
// rewrote it in place) stops the purge: a stub must never name bytes
// other than those it was planned for. The file is left as it is.
func TestPurgeStopsWhenALineChangesAfterThePlan(t *testing.T) {
	e := newEnv(t)
	in := planFixture()
	path := e.write("changed.jsonl", in)
	var changed []byte
	afterPlan = func() {
		// Same length, one byte of the large output altered.
		changed = []byte(strings.Replace(string(in), "build line 3:", "build line 4:", 1))
		if err := os.WriteFile(path, changed, 0o600); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterPlan = nil })
	_, err := File(context.Background(), path, e.opts())
	if err == nil || !strings.Contains(err.Error(), "changed between the two passes") {
		t.Fatalf("purge of a file changed after the plan: err = %v", err)
	}
	if got := readFile(t, path); string(got) != string(changed) {
		t.Error("the file was touched")
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
