package rawjson

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/testutil"
)

// walkString describes every member and element of the value at b[i],
// depth first, as the walker finds them: one line each, "key=raw@offset".
// Keys are decoded (an escaped key reads as gjson decodes it).
func walkString(t testing.TB, b []byte, i int, out *strings.Builder) {
	describe := func(key string, it Item) {
		out.WriteString(key + "=" + string(b[it.Value:it.End]) + "@" + itoa(it.Value) + "\n")
		walkString(t, b, it.Value, out)
	}
	switch {
	case i < len(b) && b[i] == '{':
		end := Members(b, i, func(it Item) bool {
			if b[it.Start] != '"' || it.Start+1+len(it.Key)+1 > it.Value {
				t.Fatalf("member key at %d does not sit before its value at %d", it.Start, it.Value)
			}
			k, ok := Unquote(`"` + string(it.Key) + `"`)
			if !ok || !KeyIs(it.Key, string(k)) {
				t.Fatalf("key %q does not decode or compare", it.Key)
			}
			describe(string(k), it)
			return true
		})
		if end < 0 || b[end] != '}' {
			t.Fatalf("object at %d: closing brace at %d", i, end)
		}
	case i < len(b) && b[i] == '[':
		end := Elements(b, i, func(it Item) bool {
			describe("", it)
			return true
		})
		if end < 0 || b[end] != ']' {
			t.Fatalf("array at %d: closing bracket at %d", i, end)
		}
	}
}

// gjsonString is walkString written with gjson, the reference.
func gjsonString(v gjson.Result, base int, out *strings.Builder) {
	if !v.IsObject() && !v.IsArray() {
		return
	}
	v.ForEach(func(k, m gjson.Result) bool {
		key := ""
		if v.IsObject() {
			key = k.String()
		}
		at := base + m.Index
		out.WriteString(key + "=" + m.Raw + "@" + itoa(at) + "\n")
		gjsonString(gjson.Parse(m.Raw), at, out)
		return true
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// compare checks the walker against gjson on one valid JSON text.
func compare(t testing.TB, line []byte) {
	var got, want strings.Builder
	i := SkipSpace(line, 0)
	walkString(t, line, i, &got)
	gjsonString(gjson.ParseBytes(line), 0, &want)
	if got.String() != want.String() {
		t.Fatalf("walker and gjson disagree on %.200q\nwalker:\n%.2000s\ngjson:\n%.2000s", line, got.String(), want.String())
	}
}

// TestWalkMatchesGjsonOnCorpus: on every line of every real transcript,
// the walker finds the same members and elements, with the same keys, raw
// values and offsets, as gjson's ForEach, all the way down.
func TestWalkMatchesGjsonOnCorpus(t *testing.T) {
	dir := testutil.CorpusConfigDir(t)
	lines := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if line := sc.Bytes(); gjson.ValidBytes(line) {
				compare(t, line)
				lines++
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines < 1000 {
		t.Fatalf("walked %d corpus lines, expected thousands", lines)
	}
}

// TestWalkCases: escaped keys, white space everywhere JSON allows it,
// empty containers, nesting, and MembersUntil stopping before a value.
func TestWalkCases(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, ` { } `, `[ ]`,
		`{"a":1,"b":"x","c":null,"d":true,"e":false,"f":-1.5e3}`,
		" {\n\t\"a\" :\r\n [ 1 , {\"b\" : [ ] } , \"\\\"\" ] ,\"c\":{}\n}\n",
		`{"k\"ey":1,"\u0041":"\\","t\tab":[["nested"]]}`,
		`[1,"two",{"three":3},[4]]`,
		`{"a":{"a":{"a":{"a":"deep"}}}}`,
		`{"s":"a \"quoted\" \\\\ string","n":0}`,
	} {
		if !gjson.Valid(s) {
			t.Fatalf("case is not JSON: %s", s)
		}
		compare(t, []byte(s))
	}
	b := []byte(`{"type":"user","message":{"content":[1,2]},"after":1}`)
	var seen []string
	end := MembersUntil(b, 0, func(k []byte, v int) bool { return string(k) == "message" }, func(it Item) bool {
		seen = append(seen, string(it.Key))
		return true
	})
	if end != -1 || strings.Join(seen, ",") != "type" {
		t.Fatalf("MembersUntil: end %d, crossed %v", end, seen)
	}
	if it, ok := Member([]byte(`{"a\u0062":2,"ab":3}`), 0, "ab"); !ok || it.Value != 11 {
		t.Fatalf("Member with an escaped key: %+v %v, want the first member's value at 11", it, ok)
	}
	if _, ok := Member([]byte(`{"a":1}`), 0, "b"); ok {
		t.Fatal("Member found a missing key")
	}
}

// TestWalkBrokenInput: on text that is not JSON (cut short, wrong
// separators, not a container) the walker stops with -1, and every item
// it reported lies inside the input.
func TestWalkBrokenInput(t *testing.T) {
	for _, s := range []string{
		``, `{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`,
		`[1,`, `[1 2]`, `{"a":"unterminated}`, `x`, `{1:2}`, `"a"`,
	} {
		b := []byte(s)
		check := func(it Item) bool {
			if it.Start < 0 || it.Value < it.Start || it.End < it.Value || it.End > len(b) {
				t.Fatalf("%q: item %+v out of bounds", s, it)
			}
			return true
		}
		if end := Members(b, 0, check); end != -1 {
			t.Errorf("Members(%q) = %d, want -1", s, end)
		}
		if end := Elements(b, 0, check); end != -1 {
			t.Errorf("Elements(%q) = %d, want -1", s, end)
		}
	}
	// A number runs to the next separator: the walker, trusting its
	// input, crosses "1;" whole and finds the brace; its items stay inside.
	if end := Members([]byte(`{"a":1;"b":2}`), 0, func(it Item) bool { return it.End <= 12 }); end != 12 {
		t.Errorf("Members on a bad separator after a number = %d, want 12", end)
	}
	if Members([]byte(`{}`), 5, func(Item) bool { return true }) != -1 || Elements([]byte(`[]`), -1, func(Item) bool { return true }) != -1 {
		t.Fatal("an offset outside the input is not -1")
	}
}

// FuzzWalk: on any input the walker never panics and reports items inside
// the input; on valid JSON it agrees with gjson.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"d"}],"e":null}`, `[{"x":1},2,"three"]`, ` {"k\\":"v"} `, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if gjson.ValidBytes(b) {
			compare(t, b)
			return
		}
		in := func(it Item) bool {
			if it.Start < 0 || it.Value < it.Start || it.End < it.Value || it.End > len(b) {
				t.Fatalf("item %+v out of bounds of %d bytes", it, len(b))
			}
			return true
		}
		i := SkipSpace(b, 0)
		Members(b, i, in)
		Elements(b, i, in)
	})
}
