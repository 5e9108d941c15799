package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"é🚀 日本語", `"é🚀 日本語"`}, // non-ASCII stays raw, as JSON.stringify writes it
		{"a\"b\\c", `"a\"b\\c"`},
		{"line\nnext\ttab\r\b\f", `"line\nnext\ttab\r\b\f"`},
		{"\x01\x1f", `"\u0001\u001f"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
		{"\u2028", "\"\u2028\""},
	}
	for _, tt := range tests {
		if got := string(Append(nil, tt.in)); got != tt.want {
			t.Errorf("Append(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := string(Append([]byte("x"), []byte(tt.in))); got != "x"+tt.want {
			t.Errorf("Append on bytes (%q) = %s", tt.in, got)
		}
	}
}

// FuzzAppend: the output is valid JSON and decodes to the input (with
// invalid UTF-8 replaced, as encoding/json also does).
func FuzzAppend(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\xfe é")
	f.Fuzz(func(t *testing.T, s string) {
		out := Append(nil, s)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q for %q", out, s)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); utf8.ValidString(s) && back != want {
			t.Fatalf("round trip %q -> %q", s, back)
		}
	})
}

func TestAppendLineSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"é\n\"\x01", "\"é\\n\\\"\\u0001\""},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
	} {
		if got := string(AppendLineSafe(nil, c.in)); got != c.want {
			t.Errorf("AppendLineSafe(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := string(Append(nil, "a\u2028b")); got != "\"a\u2028b\"" {
		t.Errorf("Append escaped U+2028: %s", got)
	}
}

// Unquote reads back what Append writes, and refuses malformed strings.
func TestUnquote(t *testing.T) {
	for _, s := range []string{"", "plain", "line\nbreak \"quoted\" back\\slash\ttab", "émoji 😀 \u2028 \x01"} {
		got, ok := Unquote(string(Append(nil, s)))
		if !ok || string(got) != s {
			t.Errorf("Unquote(Append(%q)) = %q, %v", s, got, ok)
		}
	}
	if got, ok := Unquote(`"\ud83d\ude00 \/ \u00e9"`); !ok || string(got) != "😀 / é" {
		t.Errorf("escapes: %q %v", got, ok)
	}
	for _, bad := range []string{``, `"`, `"\"`, `"\x"`, `"\u12"`, `abc`} {
		if _, ok := Unquote(bad); ok {
			t.Errorf("Unquote(%q) accepted", bad)
		}
	}
}
