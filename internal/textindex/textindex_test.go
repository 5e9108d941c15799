package textindex

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestWordsAndKeysAgree(t *testing.T) {
	cases := map[string][]string{
		"Hello, World!":           {"hello", "world"},
		"foo_bar baz-qux 42":      {"foo_bar", "baz", "qux", "42"},
		"Zürich → ÉLAN café…":     {"zürich", "élan", "café"},
		"   ":                     nil,
		"C:\\tmp\\x tab\there":    {"c", "tmp", "x", "tab", "here"},
		"naïve 日本語 🚀 done":        {"naïve", "日本語", "done"},
		"x := y; a.b.c --flag -n": {"x", "y", "a", "b", "c", "flag", "n"},
	}
	for in, want := range cases {
		got := Words(in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
		var keys []uint64
		scan([]byte(in), false, func(k uint64) { keys = append(keys, k) })
		if len(keys) != len(want) {
			t.Fatalf("scan(%q) gave %d keys, want %d", in, len(keys), len(want))
		}
		for i, w := range want {
			if keys[i] != Key(w) {
				t.Errorf("%q: key of word %d differs from Key(%q)", in, i, w)
			}
		}
	}
}

func TestEscapedScanMatchesDecoded(t *testing.T) {
	// The raw inside of JSON strings and their decoded text.
	cases := []struct{ raw, text string }{
		{`line one\nline two`, "line one\nline two"},
		{`say \"hi\" to C:\\tmp`, `say "hi" to C:\tmp`},
		{`caf\u00e9 \u00c9LAN \ud83d\ude80 rocket`, "café ÉLAN 🚀 rocket"},
		{`\u0041BC def`, "ABC def"},
		{`tab\there\/slash`, "tab\there/slash"},
		{`broken \u12 escape`, "broken 12 escape"},
	}
	for _, c := range cases {
		var a, b []uint64
		scan([]byte(c.raw), true, func(k uint64) { a = append(a, k) })
		scan([]byte(c.text), false, func(k uint64) { b = append(b, k) })
		if !slices.Equal(a, b) {
			t.Errorf("raw %q: %d keys, decoded %q: %d keys, or different", c.raw, len(a), c.text, len(b))
		}
	}
}

// memFile is a segment held in memory.
type memFile struct{ *bytes.Reader }

func build(t *testing.T, docs []string) *Segment {
	t.Helper()
	b := NewBuilder(0)
	for i, d := range docs {
		if err := b.Start(Doc{File: 7, Line: uint32(i + 1), Off: uint64(i * 100), Time: uint32(1000 + i), Kind: KindReply}); err != nil {
			t.Fatal(err)
		}
		b.AddText([]byte(d))
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	s, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLookupAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, r.IntN(1000))
	}
	docs := make([]string, 5000)
	for i := range docs {
		var sb strings.Builder
		for j := r.IntN(40); j >= 0; j-- {
			// Zipf-like: low words are common.
			sb.WriteString(vocab[int(float64(len(vocab))*r.Float64()*r.Float64()*r.Float64())])
			sb.WriteByte(' ')
		}
		docs[i] = sb.String()
	}
	s := build(t, docs)
	if s.Docs() != len(docs) {
		t.Fatalf("docs %d, want %d", s.Docs(), len(docs))
	}
	for _, w := range vocab[:300] {
		got, err := s.Lookup(Key(w), nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint32
		for i, d := range docs {
			if slices.Contains(Words(d), w) {
				want = append(want, uint32(i))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %d docs, want %d", w, len(got), len(want))
		}
	}
	if got, _ := s.Lookup(Key("nowhere"), nil); len(got) != 0 {
		t.Fatalf("a word in no document found %d", len(got))
	}
	d, err := s.Doc(4321)
	if err != nil || d.Line != 4322 || d.Off != 432100 || d.Time != 5321 || d.File != 7 || d.Kind != KindReply {
		t.Fatalf("doc 4321 = %+v, %v", d, err)
	}
}

func TestDamagedSegmentRefused(t *testing.T) {
	b := NewBuilder(0)
	for i := 0; i < 1000; i++ {
		b.Start(Doc{Line: uint32(i)})
		b.AddText([]byte(fmt.Sprintf("alpha beta w%d", i)))
	}
	var buf bytes.Buffer
	b.WriteTo(&buf)
	good := buf.Bytes()
	// A single-byte change anywhere (every byte of the dictionary, the
	// block index and the footer; every 13th of the postings and the
	// documents) is refused or read without a panic; a truncation always
	// is refused.
	f, err := decodeFooter(good[len(good)-footerSize:], uint64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(good); i++ {
		dense := uint64(i) >= f.dictOff && uint64(i) < f.docOff || i >= len(good)-footerSize
		if !dense && i%13 != 0 {
			continue
		}
		bad := slices.Clone(good)
		bad[i] ^= 0x5a
		s, err := Open(bytes.NewReader(bad), int64(len(bad)))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d: %v", i, err)
			}
			continue
		}
		for _, w := range []string{"alpha", "beta", "w17"} {
			docs, err := s.Lookup(Key(w), nil)
			if err == nil {
				for _, d := range docs {
					if _, err := s.Doc(d); err != nil {
						t.Fatalf("byte %d: a document the postings name is missing: %v", i, err)
					}
				}
			}
		}
	}
	for _, n := range []int{0, 10, len(good) / 2, len(good) - 1} {
		if _, err := Open(bytes.NewReader(good[:n]), int64(n)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

func TestIntersect(t *testing.T) {
	got := Intersect([]uint32{1, 3, 5, 7, 9}, []uint32{0, 3, 4, 9, 10})
	if !slices.Equal(got, []uint32{3, 9}) {
		t.Fatalf("got %v", got)
	}
}

func BenchmarkIndexText(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	words := strings.Fields("the a to of and in is for that on with file function error test value config request response handler session transcript record")
	for sb.Len() < 8<<20 {
		sb.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			fmt.Fprintf(&sb, " id%x", r.Uint32())
		}
		sb.WriteByte(' ')
	}
	text := []byte(sb.String())
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(0)
		for off := 0; off < len(text); off += 2000 {
			bl.Start(Doc{})
			bl.AddText(text[off:min(off+2000, len(text))])
		}
		bl.WriteTo(discard{})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestMergeKeepsWordsAndDropsDocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mk := func(n, file int) ([]string, *Segment) {
		docs := make([]string, n)
		for i := range docs {
			docs[i] = fmt.Sprintf("common w%d w%d f%d", r.IntN(500), r.IntN(5000), file)
		}
		b := NewBuilder(0)
		for i, d := range docs {
			b.Start(Doc{File: uint32(file), Line: uint32(i)})
			b.AddText([]byte(d))
		}
		var buf bytes.Buffer
		b.WriteTo(&buf)
		s, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		return docs, s
	}
	d1, s1 := mk(3000, 1)
	d2, s2 := mk(700, 2)
	d3, s3 := mk(1200, 3)
	var buf bytes.Buffer
	n, size, err := Merge(&buf, []*Segment{s1, s2, s3}, func(d Doc) bool { return d.File != 2 })
	if err != nil {
		t.Fatal(err)
	}
	if n != 4200 || size != int64(buf.Len()) {
		t.Fatalf("merged %d docs in %d bytes, want 4200 in the %d written", n, size, buf.Len())
	}
	m, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]string(nil), d1...), d3...)
	for _, w := range []string{"common", "w7", "w123", "w4999", "f1", "f2", "f3"} {
		got, err := m.Lookup(Key(w), nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint32
		for i, d := range all {
			if slices.Contains(Words(d), w) {
				want = append(want, uint32(i))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d docs after the merge, want %d", w, len(got), len(want))
		}
	}
	_ = d2
	if d, _ := m.Doc(3000); d.File != 3 || d.Line != 0 {
		t.Fatalf("doc 3000 = %+v, want file 3's first", d)
	}
}
