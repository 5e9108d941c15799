package transcript

import (
	"bytes"
	"fmt"
	"testing"

	"ccm/internal/synth"
)

// TestCheckFindsPlantedDefects generates one transcript per defect kind
// with the project's generator and checks that Check reports exactly that
// defect, at the line the generator's manifest records (the manifest is
// the generator's own bookkeeping, not a reading of its output), and no
// error besides.
func TestCheckFindsPlantedDefects(t *testing.T) {
	want := map[synth.Defect]struct {
		code string
		sev  Severity
	}{
		synth.DanglingParent: {"dangling-parent", Error},
		synth.OrphanToolUse:  {"orphan-tool-use", Error},
		// The generator drops the tool_use line the result hung off and
		// relinks, so the result sits off the chain: never sent, so no API
		// error (hand-made cases in chain_test.go cover an orphan on it).
		synth.OrphanToolResult: {"off-chain", Warning},
		synth.EmptyContent:     {"empty-content", Error},
		synth.EmptyText:        {"empty-text", Error},
		synth.MissingSignature: {"thinking-unsigned", Error},
		synth.DuplicateUUID:    {"duplicate-uuid", Warning},
		synth.TornLastLine:     {"torn-line", Warning},
		synth.InvalidLine:      {"invalid-line", Warning},
		synth.NULPadding:       {"invalid-line", Warning}, // NUL bytes run into a record on the same line
		synth.ArrayLine:        {"invalid-line", Warning},
		synth.BlankLine:        {"", Warning}, // harmless: nothing to report
	}
	for _, d := range synth.AllDefects {
		w, ok := want[d]
		if !ok {
			t.Errorf("no expectation for defect %s", d)
			continue
		}
		t.Run(string(d), func(t *testing.T) {
			var buf bytes.Buffer
			m, err := synth.Generate(&buf, synth.Options{Seed: 77, Turns: 12, Thinking: true, Progress: true, Defects: []synth.Defect{d}})
			if err != nil {
				t.Fatal(err)
			}
			planted := m.DefectsOf(d)
			if len(planted) != 1 {
				t.Fatalf("manifest lists %d defects of kind %s", len(planted), d)
			}
			line := planted[0].Line
			ix, err := Build(&buf, BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fs := Check(ix, CheckOptions{})
			found := false
			for _, f := range fs {
				if f.Line == line && f.Code == w.code && f.Severity == w.sev {
					found = true
				}
				// Another error at the planted line is its consequence: a
				// dangling parent on a tool result also strands the result.
				if f.Severity == Error && f.Line != line {
					t.Errorf("unexpected error: %d: %s: %s", f.Line, f.Code, f.Text)
				}
				if w.code == "" && f.Line == line {
					t.Errorf("a blank line was reported: %s", f.Text)
				}
			}
			if w.code != "" && !found {
				t.Errorf("no %s %s at line %d; findings: %v", w.sev, w.code, line, summarize(fs))
			}
		})
	}
}

func summarize(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d:%s", f.Line, f.Code))
	}
	return out
}
