package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestUnquoteTo(t *testing.T) {
	long := strings.Repeat("line of output\\n", 20000) // past the reader's buffer
	for _, c := range []struct{ in, want string }{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"a\nb\tc\r\b\f\/\\\""`, "a\nb\tc\r\b\f/\\\""},
		{`"é🚀 \u00e9\u65e5"`, "é🚀 é日"},
		{`"\ud83d\ude80"`, "🚀"},
		{`"lone \ud83d half"`, "lone \uFFFD half"},
		{`"\\n is not a newline"`, `\n is not a newline`},
		{` "spaced" ` + "\n", "spaced"},
		{`"` + long + `"`, strings.Repeat("line of output\n", 20000)},
	} {
		var out bytes.Buffer
		// One byte a read: every escape falls across a buffer's end somewhere.
		if err := UnquoteTo(&out, iotest.OneByteReader(strings.NewReader(c.in))); err != nil {
			t.Errorf("UnquoteTo(%.40q): %v", c.in, err)
			continue
		}
		if out.String() != c.want {
			t.Errorf("UnquoteTo(%.40q) = %.40q, want %.40q", c.in, out.String(), c.want)
		}
	}
	for _, bad := range []string{``, `plain`, `"open`, `"a" trailing`, `"bad \x escape"`, `"\u12"`, `{"a":1}`, `"a\`} {
		if err := UnquoteTo(&bytes.Buffer{}, strings.NewReader(bad)); !errors.Is(err, ErrNotString) {
			t.Errorf("UnquoteTo(%q) = %v, want ErrNotString", bad, err)
		}
	}
}

// FuzzUnquoteTo: for every string encoding/json accepts, UnquoteTo writes
// what it decodes to, and what Unquote gives.
func FuzzUnquoteTo(f *testing.F) {
	f.Add(`"a\nb"`)
	f.Add(`"\ud83d\ude80 \u00e9"`)
	f.Fuzz(func(t *testing.T, in string) {
		var want string
		if json.Unmarshal([]byte(in), &want) != nil || !strings.HasPrefix(strings.TrimSpace(in), `"`) {
			return
		}
		var out bytes.Buffer
		if err := UnquoteTo(&out, strings.NewReader(in)); err != nil {
			t.Fatalf("UnquoteTo(%q): %v", in, err)
		}
		if got, ok := Unquote(strings.TrimSpace(in)); !ok || string(got) != out.String() {
			t.Fatalf("UnquoteTo(%q) = %q, Unquote gives %q", in, out.String(), got)
		}
		if string([]rune(out.String())) != want { // each invalid byte is one U+FFFD there
			t.Fatalf("UnquoteTo(%q) = %q, encoding/json gives %q", in, out.String(), want)
		}
	})
}
