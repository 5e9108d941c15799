package transcript

import (
	"bytes"
	"strings"
	"testing"
)

// TestReverseLines: lines come last first with their offsets, whole when
// they span many chunks, without "\r\n", the unterminated last one too.
func TestReverseLines(t *testing.T) {
	long := strings.Repeat("x", 3*tailChunk+17)
	data := "first\r\n" + long + "\n\nthird\nlast-unterminated"
	var got []string
	var offs []int64
	err := ReverseLines(strings.NewReader(data), int64(len(data)), 0, func(off int64, line []byte) bool {
		got = append(got, string(line))
		offs = append(offs, off)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"last-unterminated", "third", long, "first"}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %.40q, want %.40q", i, got[i], want[i])
		}
		if !strings.HasPrefix(data[offs[i]:], want[i]) {
			t.Errorf("line %d: offset %d does not start it", i, offs[i])
		}
	}
}

// TestReverseLinesSpanningLines: consecutive lines that each span chunk
// boundaries come back whole and distinct (the buffers that join them are
// reused from line to line).
func TestReverseLinesSpanningLines(t *testing.T) {
	var lines []string
	for i, n := range []int{tailChunk + 5, 10, 2*tailChunk - 3, tailChunk, 1, 3*tailChunk + 100, 9*tailChunk + 5, 20 * tailChunk, tailChunk/2 + 7, tailChunk/2 + 9} {
		lines = append(lines, strings.Repeat(string(rune('a'+i)), n))
	}
	data := strings.Join(lines, "\n") + "\n"
	var got []string
	err := ReverseLines(strings.NewReader(data), int64(len(data)), 0, func(off int64, line []byte) bool {
		if !strings.HasPrefix(data[off:], string(line)) {
			t.Errorf("offset %d does not start the line of %d bytes", off, len(line))
		}
		got = append(got, string(line))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) {
		t.Fatalf("got %d lines, want %d", len(got), len(lines))
	}
	for i := range lines {
		if want := lines[len(lines)-1-i]; got[i] != want {
			t.Errorf("line %d: %d bytes %.10q, want %d bytes %.10q", i, len(got[i]), got[i], len(want), want)
		}
	}
}

// TestReverseLinesLimit: the limit stops the read.
func TestReverseLinesLimit(t *testing.T) {
	data := strings.Repeat(strings.Repeat("y", 1000)+"\n", 1000)
	n := 0
	err := ReverseLines(strings.NewReader(data), int64(len(data)), 2*tailChunk, func(int64, []byte) bool { n++; return true })
	if err != ErrTailLimit || n > 2*tailChunk/1000+1 {
		t.Errorf("err %v after %d lines", err, n)
	}
}

// TestReadTail: the last main-chain usage, and the boundary that makes
// earlier usage stale.
func TestReadTail(t *testing.T) {
	lines := []string{
		`{"type":"assistant","isSidechain":false,"message":{"model":"m1","usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}}}`,
		`{"type":"assistant","isSidechain":true,"message":{"model":"side","usage":{"input_tokens":999}}}`,
		`{"type":"user","message":{"role":"user","content":"the word \"usage\" in a prompt"}}`,
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	tf, err := ReadTail(bytes.NewReader(data), int64(len(data)), 0, false)
	if err != nil || !tf.HasUsage || tf.Usage.Fill() != 125 || tf.Model != "m1" || tf.UsageOffset != 0 {
		t.Fatalf("got %+v, %v", tf, err)
	}
	data = append(data, `{"type":"system","subtype":"compact_boundary","isSidechain":false,"compactMetadata":{"preTokens":125}}`+"\n"...)
	tf, err = ReadTail(bytes.NewReader(data), int64(len(data)), 0, false)
	if err != nil || tf.HasUsage || tf.Boundary <= 0 || tf.BoundaryPreTokens != 125 {
		t.Fatalf("after a boundary: got %+v, %v", tf, err)
	}
}
