package purge

import (
	"fmt"
	"testing"

	"ccm/ccm"
	"ccm/internal/synth"
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
