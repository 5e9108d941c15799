package purge

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"ccm/ccm"
	"ccm/internal/synth"

	"github.com/tidwall/gjson"
)

// synthCases are generated transcripts covering every option of the
// generator and every planted defect.
func synthCases() []struct {
	name string
	o    synth.Options
} {
	return []struct {
		name string
		o    synth.Options
	}{
		{"plain", synth.Options{Seed: 1, Turns: 8}},
		{"thinking", synth.Options{Seed: 2, Turns: 8, Thinking: true}},
		{"progress", synth.Options{Seed: 3, Turns: 8, Progress: true, Thinking: true}},
		{"images", synth.Options{Seed: 4, Turns: 12, Images: true}},
		{"compactions", synth.Options{Seed: 5, Turns: 12, Compactions: 2, Thinking: true}},
		{"sidechains", synth.Options{Seed: 6, Turns: 12, Sidechains: true, Progress: true}},
		{"rewinds", synth.Options{Seed: 7, Turns: 12, Rewinds: 2, Thinking: true}},
		{"pins", synth.Options{Seed: 8, Turns: 12, Pins: true}},
		{"inflight", synth.Options{Seed: 9, Turns: 8, InFlight: true, Thinking: true}},
		{"v2.1.330", synth.Options{Seed: 10, Turns: 8, Version: "2.1.330", Progress: true, Thinking: true}},
		{"v2.1.330-compact", synth.Options{Seed: 11, Turns: 12, Version: "2.1.330", Compactions: 1, Pins: true, Images: true}},
		{"v2.1.39", synth.Options{Seed: 12, Turns: 8, Version: "2.1.39", Progress: true, Thinking: true, Sidechains: true}},
		{"all-defects", synth.Options{Seed: 13, Turns: 30, Thinking: true, Progress: true, Defects: synth.AllDefects}},
		{"all-defects-330", synth.Options{Seed: 14, Turns: 30, Version: "2.1.330", Thinking: true, Progress: true, Defects: synth.AllDefects}},
		{"everything", synth.Options{Seed: 15, Turns: 40, Thinking: true, Progress: true, Images: true, Compactions: 2,
			Sidechains: true, Rewinds: 2, Pins: true, Defects: synth.AllDefects}},
		{"benchmark-mix", synth.Benchmark(16, 3<<20)},
		{"client-shapes", synth.Options{Seed: 17, Turns: 12, Thinking: true, Progress: true, Defects: synth.ClientShapes}},
		{"client-shapes-330", synth.Options{Seed: 18, Turns: 12, Version: "2.1.330", Defects: synth.ClientShapes}},
		{"client-shapes-and-defects", synth.Options{Seed: 19, Turns: 30, Thinking: true, Progress: true, Images: true,
			Defects: append(append([]synth.Defect{}, synth.AllDefects...), synth.ClientShapes...)}},
	}
}

// TestInvariantsSynth purges each generated transcript with several option
// sets and checks every invariant of the output (check passes, untouched
// lines identical, edits keep key order and raw non-ASCII, prompts stay
// on the chain, idempotence).
func TestInvariantsSynth(t *testing.T) {
	variants := []struct {
		name string
		set  func(*Options)
	}{
		{"default", func(*Options) {}},
		{"keep-thinking", func(o *Options) { o.KeepThinking = true }},
		{"keep-all", func(o *Options) { o.KeepThinking, o.KeepProgress, o.KeepBookkeeping = true, true, true }},
		{"repair-only", func(o *Options) { o.RepairOnly = true }},
		{"no-store", func(o *Options) { o.NoStore = true }},
		{"recent-0", func(o *Options) { o.RecentTurns = 0; o.Threshold = 500 }},
		{"live", func(o *Options) { o.Live = true }},
		{"pin-soft-threshold", func(o *Options) { o.PinDefault = ccm.PinSoft; o.Threshold = 1500; o.RecentTurns = 1 }},
	}
	for _, c := range synthCases() {
		data, _ := gen(t, c.o)
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/%s", c.name, v.name), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				o := e.opts()
				v.set(&o)
				p := e.write("s.jsonl", data)
				e.purge(p, o)
				e.invariants(data, p, o, false)
			})
		}
	}
}

// TestInvariantsSubagent purges generated subagent files: every record is
// a sidechain one and the root is the file's own.
func TestInvariantsSubagent(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		var buf = new(bytesBuffer)
		if _, err := synth.WriteSubagent(buf, synth.Options{Seed: seed, Turns: 10, Thinking: true, Progress: true, Images: true}, fmt.Sprintf("a%d", seed)); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		e := newEnv(t)
		p := e.write(fmt.Sprintf("sess/subagents/agent-a%d.jsonl", seed), data)
		o := e.opts()
		e.purge(p, o)
		e.invariants(data, p, o, true)
	}
}

// TestInvariantsSeeds: many seeds of the richest mix (every option,
// every defect, both formats), default options, for shapes no hand-made
// case thought of.
func TestInvariantsSeeds(t *testing.T) {
	for seed := int64(200); seed < 216; seed++ {
		o := synth.Options{Seed: seed, Turns: 14, Thinking: true, Progress: seed%2 == 0, Images: seed%3 == 0,
			Compactions: int(seed % 3), Sidechains: seed%4 == 1, Rewinds: int(seed % 2), Pins: true, InFlight: seed%5 == 0,
			Defects: synth.AllDefects}
		if seed%3 == 2 {
			o.Defects = append(append([]synth.Defect{}, synth.AllDefects...), synth.ClientShapes...)
		}
		if seed%2 == 1 {
			o.Version = "2.1.330"
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			data, _ := gen(t, o)
			e := newEnv(t)
			opt := e.opts()
			opt.Live = seed%5 == 0
			p := e.write("s.jsonl", data)
			e.purge(p, opt)
			e.invariants(data, p, opt, false)
		})
	}
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
