package transcript

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// CountEscapedNewlines counts what decoding the value and counting '\n'
// counts, for text full of escapes, backslashes and newlines.
func TestCountEscapedNewlines(t *testing.T) {
	pieces := []string{"a", "\n", "\\", "\\n", "\"", "\t", "n", "é", "\x01", "line\n"}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.Intn(40); j > 0; j-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		text := b.String()
		raw := rawjson.Append(nil, text)
		want := strings.Count(gjson.ParseBytes(raw).Str, "\n")
		if want != strings.Count(text, "\n") {
			t.Fatalf("fixture: %q does not round trip", text)
		}
		if got := CountEscapedNewlines(raw); got != want {
			t.Fatalf("%s: got %d, want %d", raw, got, want)
		}
	}
	for raw, want := range map[string]int{``: 0, `"\\"`: 0, `"\\n"`: 0, `"\\\n"`: 1, `"\`: 0, `{"a":"x\ny","b":["\n"]}`: 2} {
		if got := CountEscapedNewlines([]byte(raw)); got != want {
			t.Errorf("%s: got %d, want %d", raw, got, want)
		}
	}
}
