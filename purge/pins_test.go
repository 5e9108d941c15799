package purge

import (
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/pins"
	"ccm/ccm/stub"
	"ccm/internal/synth"
)

// pinFixture: directives in prompts, in a slash-command expansion, in
// assistant text and in tool output, around large results A to F.
func pinFixture() []byte {
	big := func(s string) string { return js(bigText(s, 6000)) }
	return jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"cat a.log"}`),
		toolResult("rA", "a1", "t1", big("A")),
		// The model cannot pin.
		assistantText("a2", "rA", "m2", "ccm:pin last level=hard reason=\"model says so\""),
		userPrompt("u2", "a2", "ccm:pin next level=hard reason=\"keep it\""),
		assistantToolUse("a3", "u2", "m3", "t2", "Bash", `{"command":"cat b.log"}`),
		toolResult("rB", "a3", "t2", big("B")),
		// Neither can a file it reads.
		assistantToolUse("a4", "rB", "m4", "t3", "Read", `{"file_path":"/c.txt"}`),
		toolResult("rC", "a4", "t3", js("ccm:pin next level=hard\n"+bigText("C", 6000))),
		assistantToolUse("a5", "rC", "m5", "t4", "Read", `{"file_path":"/d.txt"}`),
		toolResult("rD", "a5", "t4", big("D")),
		assistantText("a6", "rD", "m6", "ok"),
		userPrompt("u3", "a6", "ccm:pin start level=soft"),
		assistantToolUse("a7", "u3", "m7", "t5", "Bash", `{"command":"cat e.log"}`),
		toolResult("rE", "a7", "t5", big("E")),
		assistantText("a8", "rE", "m8", "ok"),
		userPrompt("u4", "a8", "ccm:pin end"),
		// A slash-command expansion is user-authored.
		rec("parentUuid", "u4", "isSidechain", false, "type", "user", "isMeta", true,
			"message", raw(`{"role":"user","content":[{"type":"text","text":"ccm:pin next level=soft reason=\"from /cmd\""}]}`), "uuid", "u5"),
		assistantToolUse("a9", "u5", "m9", "t6", "Bash", `{"command":"cat f.log"}`),
		toolResult("rF", "a9", "t6", big("F")),
		assistantText("a10", "rF", "m10", "ok"),
		userPrompt("u6", "a10", "recent one"),
		assistantText("a11", "u6", "m11", "ok"),
		userPrompt("u7", "a11", "recent two"),
		assistantText("a12", "u7", "m12", "ok"),
	)
}

func TestPins(t *testing.T) {
	in := pinFixture()
	for _, c := range []struct {
		def  ccm.PinLevel
		want map[string]pins.Pin
	}{
		{ccm.PinNone, map[string]pins.Pin{
			"rA": {Level: ccm.PinNone},
			"rB": {Level: ccm.PinHard, Reason: "keep it"},
			"rC": {Level: ccm.PinNone},
			"rD": {Level: ccm.PinNone},
			"rE": {Level: ccm.PinSoft},
			"rF": {Level: ccm.PinSoft, Reason: "from /cmd"},
		}},
		{ccm.PinSoft, map[string]pins.Pin{
			"rA": {Level: ccm.PinSoft},
			"rB": {Level: ccm.PinHard, Reason: "keep it"},
			"rC": {Level: ccm.PinSoft},
			"rD": {Level: ccm.PinSoft},
			"rE": {Level: ccm.PinSoft},
			"rF": {Level: ccm.PinSoft, Reason: "from /cmd"},
		}},
	} {
		t.Run(c.def.String(), func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.PinDefault = c.def
			rep, out := e.purgeBytes(in, o)
			if rep.Stubs != len(c.want) {
				t.Errorf("%d stubs, want %d", rep.Stubs, len(c.want))
			}
			for u, want := range c.want {
				st, ok := stub.Parse(gjson.GetBytes(lineOf(out, u), "message.content.0.content").Str)
				if !ok {
					t.Errorf("%s: not stubbed", u)
					continue
				}
				if st.Pinned != want.Level {
					t.Errorf("%s: stub says pinned: %v, want %v", u, st.Pinned, want.Level)
				}
				meta, err := e.store.Stat(st.Key)
				if err != nil {
					t.Errorf("%s: %v", u, err)
					continue
				}
				if meta.Pinned.Level != want.Level || meta.Pinned.Reason != want.Reason {
					t.Errorf("%s: store pin %v %q, want %v %q", u, meta.Pinned.Level, meta.Pinned.Reason, want.Level, want.Reason)
				}
			}
		})
	}
}

// TestPinNextSkipsUnstubbed: "next" pins the next content that is
// stored, not a large record that stays as it is (a long Bash command in
// a tool_use input is never stubbed).
func TestPinNextSkipsUnstubbed(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "ccm:pin next level=hard"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":`+js("cat <<'EOF' > x\n"+bigText("heredoc", 7000)+"EOF")+`}`),
		toolResult("r1", "a1", "t1", js(bigText("out", 7000))),
		assistantText("a2", "r1", "m2", "ok"),
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "three"),
		assistantText("a4", "u3", "m4", "ok"),
	)
	e := newEnv(t)
	_, out := e.purgeBytes(in, e.opts())
	st, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "message.content.0.content").Str)
	if !ok {
		t.Fatal("r1 not stubbed")
	}
	if st.Pinned != ccm.PinHard {
		t.Errorf("the output after 'ccm:pin next level=hard' is pinned %v", st.Pinned)
	}
}

// TestPinsSynth: the generator's directives (next hard, start/end soft in
// prompts, last hard in assistant text) on a 2.1.330 file.
func TestPinsSynth(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 71, Turns: 16, Pins: true, Version: "2.1.330"})
	if len(m.Pins) == 0 {
		t.Fatal("no pins planted")
	}
	e := newEnv(t)
	o := e.opts()
	o.Threshold = 2000
	rep, out := e.purgeBytes(in, o)
	hard := 0 // records whose stubs are pinned hard
	for _, l := range splitLines(out) {
		lineHard := false
		for _, st := range stubsIn(l) {
			meta, err := e.store.Stat(st.Key)
			if err != nil {
				t.Fatal(err)
			}
			if meta.Pinned.Level < st.Pinned {
				t.Errorf("stub pinned %v, store %v", st.Pinned, meta.Pinned.Level)
			}
			if st.Pinned == ccm.PinHard {
				lineHard = true
			}
		}
		if lineHard {
			hard++
		}
	}
	// Only the "next" directive (a prompt) may pin hard; the assistant's
	// "last level=hard" must not.
	nextHard := 0
	for _, p := range m.Pins {
		if p.Role == "user" && p.Directive == "ccm:pin next level=hard" {
			nextHard++
		}
	}
	if hard != nextHard {
		t.Errorf("%d records have stubs pinned hard, but %d user directives pin hard", hard, nextHard)
	}
	e.invariants(in, rep.Path, o, false)
}
