package transcript

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkReader returns the input in pieces of random sizes, as pipes and
// slow disks do.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + c.rng.Intn(c.max)
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// readAll reads every line and checks the invariants any reader must keep:
// line numbers count up from 1, offsets are contiguous, and the lines
// joined give back the input byte for byte.
func readAll(t testing.TB, r io.Reader, input []byte) []Line {
	t.Helper()
	rd := NewReader(r)
	var out []Line
	var joined []byte
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if l.Num != len(out)+1 {
			t.Fatalf("line number %d, want %d", l.Num, len(out)+1)
		}
		if l.Offset != int64(len(joined)) {
			t.Fatalf("line %d offset %d, want %d", l.Num, l.Offset, len(joined))
		}
		joined = append(joined, l.Raw...)
		l.Raw = append([]byte(nil), l.Raw...) // Raw is only valid until the next call
		out = append(out, l)
	}
	if !bytes.Equal(joined, input) {
		t.Fatalf("joined lines differ from input (%d vs %d bytes)", len(joined), len(input))
	}
	return out
}

func kinds(lines []Line) string {
	var s []string
	for _, l := range lines {
		s = append(s, l.Kind.String())
	}
	return strings.Join(s, ",")
}

func TestReaderKinds(t *testing.T) {
	big := `{"type":"user","message":{"content":"` + strings.Repeat("x", 70<<10) + `"}}`
	huge := `{"type":"user","message":{"content":"` + strings.Repeat("é\\n", 400<<10) + `"}}`
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"objects", "{\"a\":1}\n{\"b\":2}\n", "object,object"},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", "object,object"},
		{"blank lines", "{\"a\":1}\n\n  \n{\"b\":2}\n", "object,blank,blank,object"},
		{"no final newline, complete", "{\"a\":1}\n{\"b\":2}", "object,object"},
		{"torn final line", "{\"a\":1}\n{\"b\":", "object,torn"},
		{"invalid line", "{\"a\":1}\nnot json\n{\"b\":2}\n", "object,invalid,object"},
		{"array line", "[1,2]\n{\"b\":2}\n", "invalid,object"},
		{"string line", "\"x\"\n", "invalid"},
		{"nul padding", "{\"a\":1}\n\x00\x00\x00\x00\n{\"b\":2}\n", "object,nul,object"},
		{"nul then record on the same line", "{\"a\":1}\n\x00\x00{\"b\":2}\n", "object,invalid"},
		{"line over 64 KiB", big + "\n{\"b\":2}\n", "object,object"},
		{"line over the buffer size", huge + "\n" + big, "object,object"},
		{"unterminated object after garbage", "garbage\n{\"a\":1}", "invalid,object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{
				strings.NewReader(tt.input),
				iotest.OneByteReader(strings.NewReader(tt.input)),
				iotest.HalfReader(strings.NewReader(tt.input)),
				&chunkReader{data: []byte(tt.input), rng: rand.New(rand.NewSource(1)), max: 7000},
			} {
				lines := readAll(t, r, []byte(tt.input))
				if got := kinds(lines); got != tt.want {
					t.Fatalf("kinds = %s, want %s", got, tt.want)
				}
			}
		})
	}
}

func TestReaderBody(t *testing.T) {
	lines := readAll(t, strings.NewReader("{\"a\":1}\r\n{\"b\":2}"), []byte("{\"a\":1}\r\n{\"b\":2}"))
	if string(lines[0].Body()) != `{"a":1}` || !lines[0].Terminated {
		t.Fatalf("line 1 body %q terminated %v", lines[0].Body(), lines[0].Terminated)
	}
	if string(lines[1].Body()) != `{"b":2}` || lines[1].Terminated {
		t.Fatalf("line 2 body %q terminated %v", lines[1].Body(), lines[1].Terminated)
	}
}

// TestReaderMemoryBoundedByLongestLine reads 200 lines of 1 MB each and
// checks that the reader's buffer never grows past about one line.
func TestReaderMemoryBoundedByLongestLine(t *testing.T) {
	line := []byte(`{"c":"` + strings.Repeat("a", 1<<20) + `"}` + "\n")
	r := io.MultiReader(func() []io.Reader {
		var rs []io.Reader
		for i := 0; i < 200; i++ {
			rs = append(rs, bytes.NewReader(line))
		}
		return rs
	}()...)
	rd := NewReader(r)
	n := 0
	for {
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if cap(rd.buf) > 3*len(line) {
			t.Fatalf("buffer grew to %d bytes for %d-byte lines", cap(rd.buf), len(line))
		}
	}
	if n != 200 {
		t.Fatalf("read %d lines, want 200", n)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(3))
	f.Add([]byte("{\"a\":1}\r\n\n\x00\x00\n[1]\n{\"torn\":"), uint16(1))
	f.Add([]byte(""), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		r := &chunkReader{data: append([]byte(nil), data...), rng: rand.New(rand.NewSource(int64(chunk))), max: int(chunk)%512 + 1}
		lines := readAll(t, r, data)
		for _, l := range lines {
			body := l.Body()
			isObj := json.Valid(body) && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r"), []byte("{"))
			if (l.Kind == Object) != isObj {
				t.Fatalf("line %d %q classified %s, json object = %v", l.Num, body, l.Kind, isObj)
			}
		}
	})
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5e3,-0,true,false,null]}`, `"\u00e9\n"`, `{"a":"\x01"}`, `[1,]`, `01`, `{"a" 1}`, `"\ud800"`, `1.`, `-`, "\"\t\"", `"` + strings.Repeat("abcdefgh", 9) + `\"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("ValidJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// FuzzExtractValid holds the index's validating walk to ValidJSON (and so
// to encoding/json): a purge's two passes must agree on which lines are
// records.
func FuzzExtractValid(f *testing.F) {
	for _, s := range []string{`{"type":"user","message":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_result","content":[{"type":"image"}]}],"usage":{"input_tokens":1}}}`,
		`{"message":{"content":[1,]}}`, `{"a":1,}`, `{"message":{"content":"x"},"uuid":"u"} x`, `{"message":{"role":"\u00e9"}}`,
		`{"message":{"content":[{"type":"text","text":"\x01"}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '{' {
			return
		}
		var fa lineFacts
		var sz Sizes
		got := extract(b, &fa, &sz)
		if want := ValidJSON(b); got != want {
			t.Fatalf("extract says valid=%v, ValidJSON says %v for %q", got, want, b)
		}
	})
}
