package synth

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// toolIDs returns the ids of every tool_use and tool_result block in the file.
func toolIDs(lines [][]byte) (uses, results map[string]bool) {
	uses, results = map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		if !isObject(l) {
			continue
		}
		gjson.GetBytes(l, "message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_use":
				uses[b.Get("id").Str] = true
			case "tool_result":
				results[b.Get("tool_use_id").Str] = true
			}
			return true
		})
	}
	return
}

// checkPlanted verifies that each planted defect is at the line the
// manifest names and looks like what it claims.
func checkPlanted(t *testing.T, name string, data []byte, m Manifest, want []Defect) {
	t.Helper()
	lines := splitLines(data)
	uses, results := toolIDs(lines)
	uuids := map[string]int{}
	for _, l := range lines {
		if isObject(l) {
			if u := gjson.GetBytes(l, "uuid").Str; u != "" {
				uuids[u]++
			}
		}
	}
	got := map[Defect]int{}
	for _, d := range m.Defects {
		got[d.Kind]++
		if d.Line < 1 || d.Line > len(lines) {
			t.Errorf("%s: %s at line %d, file has %d", name, d.Kind, d.Line, len(lines))
			continue
		}
		l := lines[d.Line-1]
		r := gjson.ParseBytes(l)
		fail := func(why string) { t.Errorf("%s: %s at line %d: %s: %.300q", name, d.Kind, d.Line, why, l) }
		block := r.Get("message.content.0")
		switch d.Kind {
		case DanglingParent:
			if r.Get("type").Str != "user" || block.Get("type").Str != "tool_result" ||
				block.Get("tool_use_id").Str != d.ToolUseID || r.Get("uuid").Str != d.UUID ||
				r.Get("parentUuid").Str != d.Parent || uuids[d.Parent] != 0 {
				fail("not a tool_result with an absent parent")
			}
		case OrphanToolUse, "in-flight":
			if r.Get("type").Str != "assistant" || block.Get("type").Str != "tool_use" ||
				block.Get("id").Str != d.ToolUseID || r.Get("uuid").Str != d.UUID || results[d.ToolUseID] {
				fail("not an unanswered tool_use")
			}
		case OrphanToolResult:
			if block.Get("type").Str != "tool_result" || block.Get("tool_use_id").Str != d.ToolUseID ||
				r.Get("uuid").Str != d.UUID || uses[d.ToolUseID] {
				fail("not a tool_result without tool_use")
			}
		case EmptyContent:
			if c := r.Get("message.content"); !c.IsArray() || len(c.Array()) != 0 || r.Get("uuid").Str != d.UUID {
				fail("content is not []")
			}
		case EmptyText:
			if block.Get("type").Str != "text" || !block.Get("text").Exists() || block.Get("text").Str != "" {
				fail(`not a text block ""`)
			}
		case MissingSignature:
			if block.Get("type").Str != "thinking" || block.Get("signature").Exists() || block.Get("thinking").Str == "" {
				fail("not an unsigned thinking block")
			}
		case DuplicateUUID:
			if !bytes.Equal(l, lines[d.OtherLine-1]) || r.Get("uuid").Str != d.UUID || uuids[d.UUID] < 2 {
				fail("not a duplicate of its other line")
			}
		case TornLastLine:
			if d.Line != len(lines) || data[len(data)-1] == '\n' || json.Valid(l) ||
				!strings.Contains(string(l), `"parentUuid":"`+d.Parent+`"`) {
				fail("not a torn last line")
			}
		case InvalidLine:
			if json.Valid(l) || len(l) == 0 {
				fail("valid JSON or empty")
			}
		case NULPadding:
			if len(l) < nulRun || bytes.Count(l[:nulRun], []byte{0}) != nulRun || !isObject(l[nulRun:]) {
				fail("not NULs followed by a record")
			}
		case ArrayLine:
			if !json.Valid(l) || !r.IsArray() {
				fail("not a JSON array")
			}
		case BlankLine:
			if len(l) != 0 {
				fail("not empty")
			}
		case ParallelFork:
			checkParallelFork(t, name, lines, d)
		case UnterminatedLastRecord:
			checkUnterminated(t, name, data, lines, d)
		case MidwayRoot:
			checkMidwayRoot(t, name, lines, d, uuids)
		default:
			fail("unknown kind")
		}
	}
	for _, d := range want {
		if once(d) && got[d] == 0 && m.DefectsOf(d) != nil {
			continue // planted once however often requested
		}
		if got[d] == 0 {
			t.Errorf("%s: %s requested but not planted", name, d)
		}
		got[d]--
	}
}

// once reports whether d belongs to one end of the file and is planted
// once however often it is requested.
func once(d Defect) bool {
	return d == TornLastLine || d == UnterminatedLastRecord || d == MidwayRoot
}

func TestPlantedDefects(t *testing.T) {
	for name, o := range configs {
		o.Defects = AllDefects
		data, m := generate(t, o)
		checkPlanted(t, name, data, m, AllDefects)
		if len(m.Defects) != len(AllDefects) {
			t.Errorf("%s: %d defects planted, want %d", name, len(m.Defects), len(AllDefects))
		}
	}
	// Every defect twice, in a tiny file, still planted.
	twice := append(append([]Defect{}, AllDefects...), AllDefects...)
	for _, o := range []Options{{Seed: 11, Turns: 2, Defects: twice}, {Seed: 12, TargetBytes: 1000, Defects: twice}} {
		data, m := generate(t, o)
		checkPlanted(t, "tiny", data, m, twice)
		if len(m.Defects) != len(twice)-1 {
			t.Errorf("tiny: %d defects planted, want %d", len(m.Defects), len(twice))
		}
	}
}

func TestInFlight(t *testing.T) {
	for _, o := range []Options{{Seed: 13, Turns: 5, InFlight: true}, {Seed: 14, TargetBytes: 1 << 20, InFlight: true, Progress: true}} {
		data, m := generate(t, o)
		fl := m.DefectsOf("in-flight")
		if len(fl) != 1 {
			t.Fatalf("in-flight entries: %+v", m.Defects)
		}
		checkPlanted(t, "in-flight", data, m, nil)
		lines := splitLines(data)
		leaf, _, _ := walk(lines)
		if leaf != m.LeafUUID {
			t.Errorf("leaf %s, manifest %s", leaf, m.LeafUUID)
		}
		if v := checkPairs(lines); len(v) != 1 || v[0].id != fl[0].ToolUseID {
			t.Errorf("pair violations %+v, want only the in-flight tool_use", v)
		}
	}
}

func TestDefectsBreakOnlyWhatTheyClaim(t *testing.T) {
	o := configs["full-new"]
	o.Defects = AllDefects
	data, m := generate(t, o)
	v := checkPairs(splitLines(data))
	want := map[string]bool{}
	for _, d := range m.Defects {
		if d.Kind == OrphanToolUse || d.Kind == OrphanToolResult {
			want[d.ToolUseID] = true
		}
	}
	for _, x := range v {
		if !want[x.id] {
			t.Errorf("unexpected pair violation %+v", x)
		}
	}
	if len(v) != len(want) {
		t.Errorf("%d violations, want %d", len(v), len(want))
	}
}

func TestPins(t *testing.T) {
	for _, name := range []string{"full-old", "full-new"} {
		testPins(t, configs[name])
	}
}

func testPins(t *testing.T, o Options) {
	data, m := generate(t, o)
	lines := splitLines(data)
	if len(m.Pins) != 4 {
		t.Fatalf("pins: %+v", m.Pins)
	}
	for _, p := range m.Pins {
		r := gjson.ParseBytes(lines[p.Line-1])
		text := r.Get("message.content").Str
		r.Get("message.content.#.text").ForEach(func(_, x gjson.Result) bool { text += x.Str; return true })
		if r.Get("message.role").Str != p.Role || r.Get("uuid").Str != p.UUID || !strings.Contains(text, p.Directive) {
			t.Errorf("pin %+v not found at its line: %.200s", p, lines[p.Line-1])
		}
	}
}

func TestEscaper(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', 'Z', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', 0, 1, 0x1f, 0x7f, 'é', '→', '🚀', 0x2028, 0xfffd}
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for j := r.IntN(40); j > 0; j-- {
			sb.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		var back string
		if err := json.Unmarshal(appendString(nil, s), &back); err != nil || back != s {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
	}
	if got := string(appendString(nil, "é🚀\n\"\x01")); got != `"é🚀\n\"\u0001"` {
		t.Errorf("escaping: %s", got)
	}
	if got := string(appendString(nil, []byte("a\xffb"))); got != "\"a\uFFFDb\"" {
		t.Errorf("invalid UTF-8: %s", got)
	}
}
