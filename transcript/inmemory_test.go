package transcript

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// inMemoryInputs are inputs for the in-memory readers: every kind of
// line, lines longer than a chunk, CRLF, blank and unterminated lines.
func inMemoryInputs() []string {
	long := strings.Repeat("x", 3*tailChunk+17)
	big := `{"type":"user","message":{"content":"` + strings.Repeat("é\\n", 100<<10) + `"}}`
	return []string{
		"",
		"\n",
		"{\"a\":1}\n{\"b\":2}\n",
		"{\"a\":1}\r\n{\"b\":2}\r\n",
		"{\"a\":1}\n\n  \n{\"b\":2}\n",
		"{\"a\":1}\n{\"b\":2}",
		"{\"a\":1}\n{\"b\":",
		"{\"a\":1}\nnot json\n[1,2]\n\"x\"\n",
		"{\"a\":1}\n\x00\x00\x00\x00\n\x00\x00{\"b\":2}\n",
		"first\r\n" + long + "\n\nthird\nlast-unterminated",
		big + "\n" + long + "\n" + big,
		strings.Repeat("{\"k\":\"v\"}\n", 20000),
	}
}

// TestReaderBytesSameAsReader: NewReaderBytes gives the lines NewReader
// gives (bytes, offsets, numbers, kinds, terminators), as views into the
// data.
func TestReaderBytesSameAsReader(t *testing.T) {
	for i, in := range inMemoryInputs() {
		want := readAll(t, strings.NewReader(in), []byte(in))
		data := []byte(in)
		rd := NewReaderBytes(data)
		var got []Line
		for {
			l, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
			if len(l.Raw) > 0 && &l.Raw[0] != &data[l.Offset] {
				t.Fatalf("input %d: line %d is a copy, not a view into the data", i, l.Num)
			}
			got = append(got, l)
		}
		if len(got) != len(want) {
			t.Fatalf("input %d: %d lines, want %d", i, len(got), len(want))
		}
		for j := range want {
			g, w := got[j], want[j]
			if g.Num != w.Num || g.Offset != w.Offset || g.Kind != w.Kind || g.Terminated != w.Terminated || !bytes.Equal(g.Raw, w.Raw) {
				t.Errorf("input %d line %d: got %d@%d %s %v, want %d@%d %s %v", i, j, g.Num, g.Offset, g.Kind, g.Terminated, w.Num, w.Offset, w.Kind, w.Terminated)
			}
		}
	}
}

// TestReverseLinesBytesSameAsReverseLines: the same lines and offsets as
// ReverseLines, from data at any base offset, stopping when fn says so.
func TestReverseLinesBytesSameAsReverseLines(t *testing.T) {
	type line struct {
		off  int64
		text string
	}
	for i, in := range inMemoryInputs() {
		for _, stopAfter := range []int{-1, 1, 3} {
			collect := func(out *[]line) func(int64, []byte) bool {
				return func(off int64, l []byte) bool {
					*out = append(*out, line{off, string(l)})
					return stopAfter < 0 || len(*out) < stopAfter
				}
			}
			var want, got []line
			if err := ReverseLines(strings.NewReader(in), int64(len(in)), 0, collect(&want)); err != nil {
				t.Fatal(err)
			}
			ReverseLinesBytes([]byte(in), 1000, collect(&got))
			if len(got) != len(want) {
				t.Fatalf("input %d, stop after %d: %d lines, want %d", i, stopAfter, len(got), len(want))
			}
			for j := range want {
				if got[j].off != want[j].off+1000 || got[j].text != want[j].text {
					t.Errorf("input %d line %d: %d %.20q, want %d %.20q", i, j, got[j].off, got[j].text, want[j].off+1000, want[j].text)
				}
			}
		}
	}
}

// TestReadTailBytesSameAsReadTail: the same facts as ReadTail on a
// transcript with usage records, a sidechain, a boundary and records
// after it, read whole and from each line's start on.
func TestReadTailBytesSameAsReadTail(t *testing.T) {
	lines := []string{
		`{"type":"assistant","isSidechain":false,"message":{"model":"m1","content":[{"type":"text","text":"before"}],"usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}}}`,
		`{"type":"system","subtype":"compact_boundary","isSidechain":false,"compactMetadata":{"preTokens":125}}`,
		`{"type":"assistant","isSidechain":false,"message":{"model":"m2","content":[{"type":"text","text":"after"}],"usage":{"input_tokens":1,"cache_read_input_tokens":2,"cache_creation_input_tokens":3,"output_tokens":4}}}`,
		`{"type":"assistant","isSidechain":true,"message":{"model":"side","usage":{"input_tokens":999}}}`,
		`{"type":"user","message":{"role":"user","content":"the word \"usage\" in a prompt"}}`,
		`{"type":"assistant","message":{"model":"m3","usage":{"input_tokens":1`,
	}
	pad := strings.Repeat("p", 2*tailChunk+5)
	mention := `{"type":"user","message":{"role":"user","content":"a \"compact_boundary\" here, ` + pad + ` and \"compact_boundary\" again"}}`
	sideBoundary := `{"type":"system","subtype":"compact_boundary","isSidechain":true,"compactMetadata":{"preTokens":1}}`
	// A real boundary, then after it lines that name one without being one,
	// then the usage: the boundary found must be the real one.
	lines = append(lines[:3:3], mention, sideBoundary, `{"type":"system","subtype":"compact_boundary","isSidechain":false,"compactMetadata":{"preTokens":9}}`,
		mention+"\r", `{"pad":"`+pad+`"}`, sideBoundary, lines[2], lines[4], lines[5])
	data := strings.Join(lines, "\n")
	for from := 0; from < len(data); from = from + strings.IndexByte(data[from:]+"\n", '\n') + 1 {
		for _, wantBoundary := range []bool{false, true} {
			want, err := ReadTail(strings.NewReader(data[from:]), int64(len(data)-from), 0, wantBoundary)
			if err != nil {
				t.Fatal(err)
			}
			if want.HasUsage {
				want.UsageOffset += int64(from)
			}
			if want.Boundary >= 0 {
				want.Boundary += int64(from)
			}
			got := ReadTailBytes([]byte(data[from:]), int64(from), wantBoundary)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("from %d, boundary %v: got %+v, want %+v", from, wantBoundary, got, want)
			}
		}
	}
}
