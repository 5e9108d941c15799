package synth

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/tidwall/gjson"
)

// configs are the option sets most tests run over.
var configs = map[string]Options{
	"plain":    {Seed: 1, Turns: 12},
	"full-old": {Seed: 2, Turns: 30, Thinking: true, Progress: true, Images: true, Compactions: 2, Sidechains: true, Rewinds: 2, Pins: true},
	"full-new": {Seed: 3, Turns: 20, Version: "2.1.330", Thinking: true, Progress: true, Images: true, Compactions: 1, Sidechains: true, Rewinds: 1, Pins: true},
	"bytes":    {Seed: 4, TargetBytes: 3 << 20, Thinking: true},
}

func TestDeterminism(t *testing.T) {
	for name, o := range configs {
		o.Defects = AllDefects
		a, ma := generate(t, o)
		b, mb := generate(t, o)
		if !bytes.Equal(a, b) || ma.Lines != mb.Lines {
			t.Errorf("%s: same seed gave different output", name)
		}
		o.Seed += 1000
		c, _ := generate(t, o)
		if bytes.Equal(a, c) {
			t.Errorf("%s: different seeds gave identical output", name)
		}
	}
}

func TestEveryLineIsAnObject(t *testing.T) {
	for name, o := range configs {
		for _, defects := range [][]Defect{nil, AllDefects} {
			o.Defects = defects
			data, m := generate(t, o)
			bad := badLines(m)
			types := map[string]int{}
			for i, l := range splitLines(data) {
				ok := isObject(l)
				if ok == bad[i+1] {
					t.Errorf("%s: line %d: valid object %v, manifest says bad %v: %.200q", name, i+1, ok, bad[i+1], l)
				}
				if ok {
					types[gjson.GetBytes(l, "type").Str]++
				}
			}
			for k, v := range m.Types {
				if types[k] != v {
					t.Errorf("%s: type %s: manifest %d, counted %d", name, k, v, types[k])
				}
			}
			if len(types) != len(m.Types) || m.BadLines != len(bad) {
				t.Errorf("%s: types %v vs manifest %v; bad lines %d vs %d", name, types, m.Types, len(bad), m.BadLines)
			}
			if len(defects) == 0 && data[len(data)-1] != '\n' {
				t.Errorf("%s: file does not end with a newline", name)
			}
		}
	}
}

func TestToolPairsAdjacentWithoutDefects(t *testing.T) {
	for name, o := range configs {
		for seed := int64(0); seed < 3; seed++ {
			o.Seed += seed
			data, m := generate(t, o)
			if v := checkPairs(splitLines(data)); len(v) > 0 {
				t.Errorf("%s seed %d: %d violations, first %+v", name, o.Seed, len(v), v[0])
			}
			if m.ToolPairs != m.ToolUses || m.ToolResults != m.ToolUses {
				t.Errorf("%s: uses %d results %d pairs %d", name, m.ToolUses, m.ToolResults, m.ToolPairs)
			}
		}
	}
}

func TestActiveChain(t *testing.T) {
	for name, o := range configs {
		for _, defects := range [][]Defect{nil, AllDefects} {
			o.Defects = defects
			data, m := generate(t, o)
			leaf, prompts, _ := walk(splitLines(data))
			if leaf != m.LeafUUID || prompts != m.ActivePrompts {
				t.Errorf("%s (%d defects): walk leaf %s prompts %d; manifest %s %d",
					name, len(defects), leaf, prompts, m.LeafUUID, m.ActivePrompts)
			}
		}
	}
	// Without compactions, rewinds or broken parents, the walk reaches
	// every prompt.
	o := Options{Seed: 9, Turns: 25, Thinking: true, Progress: true, Sidechains: true, Version: "2.1.330"}
	data, m := generate(t, o)
	if _, prompts, _ := walk(splitLines(data)); prompts != 25 || m.Prompts != 25 || m.ActivePrompts != 25 {
		t.Errorf("walk reached %d prompts, manifest %d/%d, want 25", prompts, m.ActivePrompts, m.Prompts)
	}
}

func TestTargetBytes(t *testing.T) {
	const target = 2 << 20
	_, m := generate(t, Options{Seed: 5, TargetBytes: target})
	if m.Bytes < target || m.Bytes > target+8<<20 {
		t.Errorf("wrote %d bytes for target %d", m.Bytes, target)
	}
}

func TestSubagent(t *testing.T) {
	var buf bytes.Buffer
	o := Options{Seed: 6, Turns: 8, Thinking: true, Progress: true, SessionID: "11111111-2222-4333-8444-555555555555"}
	m, err := WriteSubagent(&buf, o, "a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	checkSize(t, buf.Bytes(), m)
	lines := splitLines(buf.Bytes())
	for i, l := range lines {
		r := gjson.ParseBytes(l)
		if !r.Get("isSidechain").Bool() || r.Get("agentId").Str != "a1b2c3d" || r.Get("sessionId").Str != o.SessionID {
			t.Fatalf("line %d lacks sidechain fields: %.200s", i+1, l)
		}
	}
	if p := gjson.GetBytes(lines[0], "parentUuid"); p.Type != gjson.Null || !isPrompt(gjson.ParseBytes(lines[0])) {
		t.Errorf("first line is not a root prompt: %.200s", lines[0])
	}
	if v := checkPairs(lines); len(v) > 0 {
		t.Errorf("%d pair violations, first %+v", len(v), v[0])
	}
	if _, prompts, steps := walk(lines); prompts != 1 || steps < 10 {
		t.Errorf("walk: %d prompts in %d steps", prompts, steps)
	}
}

// peakWriter discards output and samples the live heap every few MB.
type peakWriter struct {
	n, next int64
	peak    uint64
}

func (w *peakWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.n >= w.next {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.peak = max(w.peak, ms.HeapAlloc)
		w.next = w.n + 1<<20
	}
	return len(p), nil
}

func TestBoundedMemory(t *testing.T) {
	peak := func(target int64) uint64 {
		runtime.GC()
		w := &peakWriter{}
		if _, err := Generate(w, Options{Seed: 7, TargetBytes: target, Thinking: true, Progress: true,
			Version: "2.1.330", Images: true}); err != nil {
			t.Fatal(err)
		}
		return w.peak
	}
	small, big := peak(2<<20), peak(20<<20)
	t.Logf("peak heap: %d MB for 2 MB, %d MB for 20 MB", small>>20, big>>20)
	if big > 64<<20 || big > 2*small+32<<20 {
		t.Errorf("heap grows with size: %d MB for 2 MB, %d MB for 20 MB", small>>20, big>>20)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"bench-2.0.76", Benchmark(42, 20<<20)},
		{"progress-2.1.330", Options{Seed: 42, TargetBytes: 20 << 20, Version: "2.1.330", Thinking: true, Progress: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				m, err := Generate(io.Discard, bc.o)
				if err != nil {
					b.Fatal(err)
				}
				n = m.Bytes
			}
			b.SetBytes(n)
		})
	}
}

func TestLinksResolve(t *testing.T) {
	for name, o := range configs {
		data, _ := generate(t, o)
		lines := splitLines(data)
		useLine := map[string]string{} // tool id -> uuid of its tool_use line
		uuids := map[string]bool{}
		for _, l := range lines {
			r := gjson.ParseBytes(l)
			uuids[r.Get("uuid").Str] = true
			if b := r.Get("message.content.0"); b.Get("type").Str == "tool_use" {
				useLine[b.Get("id").Str] = r.Get("uuid").Str
			}
		}
		last := ""
		for i, l := range lines {
			r := gjson.ParseBytes(l)
			at := func(why string) { t.Errorf("%s: line %d: %s: %.200s", name, i+1, why, l) }
			if p := r.Get("parentUuid"); p.Type == gjson.String && !uuids[p.Str] {
				at("parentUuid not in file")
			} else if p.Exists() && p.Type == gjson.Null && !isPrompt(r) && r.Get("subtype").Str != "compact_boundary" &&
				r.Get("type").Str != "attachment" {
				at("unexpected root")
			}
			if lp := r.Get("logicalParentUuid"); lp.Exists() && !uuids[lp.Str] {
				at("logicalParentUuid not in file")
			}
			if s := r.Get("sourceToolAssistantUUID"); s.Exists() && s.Str != useLine[r.Get("message.content.0.tool_use_id").Str] {
				at("sourceToolAssistantUUID does not name the tool_use line")
			}
			if ts := r.Get("timestamp").Str; ts != "" && r.Get("type").Str != "file-history-snapshot" {
				if ts < last {
					at("timestamp goes back from " + last)
				}
				last = ts
			}
		}
	}
}
