package synth

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The checks below read the output with gjson only, never the generator's
// structures: they confirm that each client shape is in the file where the
// manifest says, in the form docs/transcript-format.md describes.

// lineOf returns the 0-based index of the line whose record has uuid u, or -1.
func lineOf(lines [][]byte, u string) int {
	for i, l := range lines {
		if isObject(l) && gjson.GetBytes(l, "uuid").Str == u {
			return i
		}
	}
	return -1
}

// checkParallelFork: tool_use lines of one message chained one under the
// other, each result under its own tool_use line, the first result with a
// text block after its tool_result, the chain continuing from the last.
func checkParallelFork(t *testing.T, name string, lines [][]byte, d Planted) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: parallel-fork at line %d: "+format, append([]any{name, d.Line}, args...)...)
	}
	n := len(d.UseLines)
	if n < 2 || n > 3 || len(d.ResultLines) != n || d.Line != d.ResultLines[0] {
		fail("use lines %v, result lines %v", d.UseLines, d.ResultLines)
		return
	}
	var msgID, reqID string
	for i := 0; i < n; i++ {
		use := gjson.ParseBytes(lines[d.UseLines[i]-1])
		res := gjson.ParseBytes(lines[d.ResultLines[i]-1])
		blk := use.Get("message.content")
		if use.Get("type").Str != "assistant" || len(blk.Array()) != 1 || blk.Get("0.type").Str != "tool_use" {
			fail("line %d is not a single tool_use line", d.UseLines[i])
			return
		}
		if i == 0 {
			msgID, reqID = use.Get("message.id").Str, use.Get("requestId").Str
			if use.Get("uuid").Str != d.Parent {
				fail("first tool_use uuid %s, manifest parent %s", use.Get("uuid").Str, d.Parent)
			}
		} else {
			prev := gjson.GetBytes(lines[d.UseLines[i-1]-1], "uuid").Str
			if use.Get("message.id").Str != msgID || use.Get("requestId").Str != reqID {
				fail("tool_use line %d belongs to another message", d.UseLines[i])
			}
			if use.Get("parentUuid").Str != prev || d.UseLines[i] != d.UseLines[i-1]+1 {
				fail("tool_use line %d is not chained right under the previous one", d.UseLines[i])
			}
		}
		content := res.Get("message.content").Array()
		if res.Get("type").Str != "user" || len(content) == 0 || content[0].Get("type").Str != "tool_result" ||
			content[0].Get("tool_use_id").Str != blk.Get("0.id").Str {
			fail("line %d does not answer tool_use %s", d.ResultLines[i], blk.Get("0.id").Str)
			return
		}
		if res.Get("parentUuid").Str != use.Get("uuid").Str {
			fail("result line %d hangs off %s, not its tool_use line", d.ResultLines[i], res.Get("parentUuid").Str)
		}
		src := res.Get("sourceToolAssistantUUID")
		if strings.HasPrefix(res.Get("version").Str, "2.1.") != src.Exists() || (src.Exists() && src.Str != use.Get("uuid").Str) {
			fail("result line %d: sourceToolAssistantUUID %q", d.ResultLines[i], src.Str)
		}
		if i == 0 {
			if len(content) != 2 || content[1].Get("type").Str != "text" || content[1].Get("text").Str == "" ||
				res.Get("uuid").Str != d.UUID || content[0].Get("tool_use_id").Str != d.ToolUseID {
				fail("first result does not hold its tool_result then the user's text")
			}
		} else if len(content) != 1 {
			fail("result line %d has %d blocks", d.ResultLines[i], len(content))
		}
	}
	// The chain goes on from the last result: the next user or assistant
	// record reaches it through progress records only.
	lastRes := gjson.ParseBytes(lines[d.ResultLines[n-1]-1])
	last, side := lastRes.Get("uuid").Str, lastRes.Get("isSidechain").Bool()
	for i := d.ResultLines[n-1]; i < len(lines); i++ {
		r := gjson.ParseBytes(lines[i])
		if typ := r.Get("type").Str; (typ != "user" && typ != "assistant") || r.Get("isSidechain").Bool() != side {
			continue
		}
		p := r.Get("parentUuid").Str
		for j := lineOf(lines, p); j >= 0 && gjson.GetBytes(lines[j], "type").Str == "progress"; j = lineOf(lines, p) {
			p = gjson.GetBytes(lines[j], "parentUuid").Str
		}
		if p != last {
			fail("the record at line %d does not continue from the last result", i+1)
		}
		return
	}
	fail("nothing follows the last result")
}

// checkUnterminated: a complete record as the last line, no newline, under
// one or two progress records hanging off the last user or assistant record.
func checkUnterminated(t *testing.T, name string, data []byte, lines [][]byte, d Planted) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: unterminated-last-record at line %d: "+format, append([]any{name, d.Line}, args...)...)
	}
	l := lines[d.Line-1]
	r := gjson.ParseBytes(l)
	if d.Line != len(lines) || data[len(data)-1] == '\n' || !isObject(l) || r.Get("type").Str != "system" ||
		r.Get("uuid").Str != d.UUID || r.Get("parentUuid").Str != d.Parent {
		fail("not a complete system record ending the file without a newline: %.200q", l)
		return
	}
	if n := len(d.ProgressLines); n < 1 || n > 2 {
		fail("%d progress lines", n)
		return
	}
	parent := gjson.GetBytes(lines[d.OtherLine-1], "uuid").Str
	for _, pl := range d.ProgressLines {
		p := gjson.ParseBytes(lines[pl-1])
		if p.Get("type").Str != "progress" || p.Get("parentUuid").Str != parent {
			fail("line %d is not a progress record under %s", pl, parent)
		}
		if dt := p.Get("data.type").Str; dt != "hook_progress" && dt != "agent_progress" {
			fail("line %d: progress of type %q", pl, dt)
		}
		parent = p.Get("uuid").Str
	}
	if parent != d.Parent || lineOf(lines, d.Parent) != d.ProgressLines[len(d.ProgressLines)-1]-1 {
		fail("the last record's parent is not the last progress record")
	}
	anchor := gjson.ParseBytes(lines[d.OtherLine-1])
	if typ := anchor.Get("type").Str; typ != "user" && typ != "assistant" {
		fail("the progress records hang off a %s record", typ)
	}
	for i := d.OtherLine; i < len(lines); i++ {
		if typ := gjson.GetBytes(lines[i], "type").Str; typ == "user" || typ == "assistant" {
			fail("line %d, a %s record, comes after the anchor", i+1, typ)
		}
	}
}

// checkMidwayRoot: the first record with a uuid names an absent parent.
func checkMidwayRoot(t *testing.T, name string, lines [][]byte, d Planted, uuids map[string]int) {
	t.Helper()
	r := gjson.ParseBytes(lines[d.Line-1])
	if r.Get("uuid").Str != d.UUID || r.Get("parentUuid").Str != d.Parent || d.Parent == "" || uuids[d.Parent] != 0 {
		t.Errorf("%s: midway-root at line %d: not a record with an absent parent: %.200q", name, d.Line, lines[d.Line-1])
	}
	for i := 0; i < d.Line-1; i++ {
		if gjson.GetBytes(lines[i], "uuid").Exists() {
			t.Errorf("%s: midway-root at line %d: line %d has a uuid before it", name, d.Line, i+1)
		}
	}
	if lineOf(lines, d.UUID) != d.Line-1 {
		t.Errorf("%s: midway-root: its uuid is not first met at line %d", name, d.Line)
	}
}

// shapeConfigs covers both formats, progress on and off, a size target and
// an in-flight end.
var shapeConfigs = map[string]Options{
	"plain":        {Seed: 21, Turns: 6},
	"full-old":     configs["full-old"],
	"full-new":     configs["full-new"],
	"bytes":        {Seed: 22, TargetBytes: 2 << 20, Thinking: true},
	"progress-new": {Seed: 23, Turns: 10, Version: "2.1.330", Progress: true, Thinking: true},
	"inflight":     {Seed: 24, Turns: 5, InFlight: true, Progress: true},
	"one-turn":     {Seed: 25, Turns: 1},
}

func TestClientShapes(t *testing.T) {
	for name, o := range shapeConfigs {
		// Each shape twice: the fork is planted twice, each end once.
		o.Defects = append(append([]Defect{}, ClientShapes...), ClientShapes...)
		data, m := generate(t, o)
		checkPlanted(t, name, data, m, o.Defects)
		if n := len(m.DefectsOf(ParallelFork)); n != 2 {
			t.Errorf("%s: %d parallel forks, want 2", name, n)
		}
		if len(m.DefectsOf(UnterminatedLastRecord)) != 1 || len(m.DefectsOf(MidwayRoot)) != 1 {
			t.Errorf("%s: ends planted %+v", name, m.Defects)
		}
		// Otherwise valid JSONL: every line one object, a newline after
		// every line but the last.
		lines := splitLines(data)
		for i, l := range lines {
			if !isObject(l) {
				t.Errorf("%s: line %d is not an object: %.200q", name, i+1, l)
			}
		}
		if m.BadLines != 0 || bytes.Count(data, []byte{'\n'}) != len(lines)-1 {
			t.Errorf("%s: %d bad lines, %d newlines for %d lines", name, m.BadLines, bytes.Count(data, []byte{'\n'}), len(lines))
		}
		// The walk from the last record reaches what the manifest says.
		leaf, prompts, _ := walk(lines)
		if leaf != m.LeafUUID || prompts != m.ActivePrompts || leaf != m.DefectsOf(UnterminatedLastRecord)[0].UUID {
			t.Errorf("%s: walk leaf %s prompts %d; manifest %s %d", name, leaf, prompts, m.LeafUUID, m.ActivePrompts)
		}
		// Parallel results are paired like any other; only an in-flight
		// tool_use stays unanswered.
		want := len(m.DefectsOf("in-flight"))
		if v := checkPairs(lines); len(v) != want {
			t.Errorf("%s: pair violations %+v", name, v)
		}
		if m.ToolPairs != m.ToolUses-want || m.ToolResults != m.ToolPairs {
			t.Errorf("%s: uses %d results %d pairs %d", name, m.ToolUses, m.ToolResults, m.ToolPairs)
		}
		// Same seed, same bytes.
		if again, _ := generate(t, o); !bytes.Equal(data, again) {
			t.Errorf("%s: same seed gave different output", name)
		}
	}
}

func TestTornLastLineWinsOverUnterminated(t *testing.T) {
	o := Options{Seed: 27, Turns: 4, Defects: []Defect{UnterminatedLastRecord, TornLastLine}}
	data, m := generate(t, o)
	if len(m.DefectsOf(UnterminatedLastRecord)) != 0 || len(m.DefectsOf(TornLastLine)) != 1 {
		t.Fatalf("planted %+v", m.Defects)
	}
	lines := splitLines(data)
	if json.Valid(lines[len(lines)-1]) {
		t.Errorf("the last line is valid JSON, want the torn record")
	}
	checkPlanted(t, "torn+unterminated", data, m, []Defect{TornLastLine})
}

func TestSubagentShapes(t *testing.T) {
	var buf bytes.Buffer
	m, err := WriteSubagent(&buf, Options{Seed: 28, Turns: 6, Progress: true, Version: "2.1.330", Defects: ClientShapes}, "a9")
	if err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	checkSize(t, data, m)
	if len(m.Defects) != 1 || m.Defects[0].Kind != ParallelFork {
		t.Fatalf("subagent planted %+v, want only the parallel fork", m.Defects)
	}
	checkPlanted(t, "subagent", data, m, []Defect{ParallelFork})
	if data[len(data)-1] != '\n' || gjson.GetBytes(splitLines(data)[0], "parentUuid").Type != gjson.Null {
		t.Errorf("subagent file does not start at its root or end with a newline")
	}
}

func TestParseShapes(t *testing.T) {
	ds, err := ParseDefects("blank-line, shapes,midway-root")
	if err != nil {
		t.Fatal(err)
	}
	want := []Defect{"blank-line", "parallel-fork", "unterminated-last-record", "midway-root", "midway-root"}
	if len(ds) != len(want) {
		t.Fatalf("parsed %v", ds)
	}
	for i := range want {
		if ds[i] != want[i] {
			t.Errorf("parsed %v, want %v", ds, want)
		}
	}
	all, _ := ParseDefects("all")
	for _, d := range all {
		if d == ParallelFork || d == UnterminatedLastRecord || d == MidwayRoot {
			t.Errorf("all includes the client shape %s", d)
		}
	}
}
