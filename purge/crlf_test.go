package purge

import (
	"bytes"
	"testing"

	"ccm/internal/synth"
)

// A transcript whose lines end in CRLF (one that went through a Windows
// editor or git's autocrlf; Claude Code itself writes LF everywhere) is
// read as records: the \r is JSON whitespace. A purge decides exactly as
// for the LF file, keeps each line it does not change as written, \r
// included, and restore gives back the original bytes.
func TestCRLFTranscript(t *testing.T) {
	lf, _ := gen(t, synth.Options{Seed: 141, Turns: 16, Thinking: true, Progress: true, Images: true})
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	e := newEnv(t)
	repLF, outLF := e.purgeBytes(lf, e.opts())
	repCR, outCR := e.purgeBytes(crlf, e.opts())
	if !repCR.Changed || repCR.Stats != repLF.Stats {
		t.Fatalf("CRLF purge decided otherwise:\n  LF   %+v\n  CRLF %+v", repLF.Stats, repCR.Stats)
	}
	if got := bytes.ReplaceAll(outCR, []byte("\r"), nil); !bytes.Equal(got, outLF) {
		t.Error("the CRLF output, less its CRs, is not the LF output")
		reportFirstDiff(t, outLF, got)
	}
	in := map[string]bool{}
	for _, l := range bytes.SplitAfter(crlf, []byte("\n")) {
		in[string(l)] = true
	}
	kept := 0
	for _, l := range bytes.SplitAfter(outCR, []byte("\n")) {
		if in[string(l)] {
			kept++
		} else if in[string(bytes.TrimSuffix(l, []byte("\n")))+"\r\n"] {
			t.Errorf("a line lost its CR: %.120s", l)
		}
	}
	if kept == 0 {
		t.Error("no line kept as written")
	}
	e.roundTrip(e.write("r.jsonl", crlf))
}
