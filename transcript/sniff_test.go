package transcript

import (
	"strings"
	"testing"
)

// TestSniffAsBuild: Sniff refuses what Build refuses, in the same words,
// and accepts what Build accepts.
func TestSniffAsBuild(t *testing.T) {
	for i, in := range []string{
		// Refused:
		"hello world\nnot json\n",
		"\n\n[1,2,3]\n",
		"\"a string\"\n",
		`{"a":1}` + "\n" + `{"b":2}` + "\n",
		"\x00\x00\x00\x00",
		`{"type":"user","message":{"role":"user","content":"cut`,
		// Accepted:
		"garbage\n" + `{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n",
		`{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n",
		`{"x":1}` + "\n" + `{"type":"summary","summary":"s"}` + "\n",
		"\n\n",
	} {
		refused := i < 6
		want := ""
		if _, err := Build(strings.NewReader(in), BuildOptions{}); err != nil {
			want = err.Error()
		}
		got := ""
		if err := Sniff(strings.NewReader(in)); err != nil {
			got = err.Error()
		}
		if (want != "") != refused {
			t.Errorf("%.30q: Build says %q", in, want)
		}
		if got != want {
			t.Errorf("%.30q: Sniff says %q, Build %q", in, got, want)
		}
	}
}
