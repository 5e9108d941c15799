package ccm

import (
	"strings"
	"testing"
)

// FuzzParseKey: whatever is accepted names a file inside the store.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"sha256:" + strings.Repeat("a", 64), "b2s:0123456789abcdef", "../../settings", "sha256:../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		h := k.Hex()
		if strings.ContainsAny(h, "/\\.\x00") || (len(h) != 64 && len(h) != 16) || string(k) != s {
			t.Fatalf("accepted %q (hex %q)", s, h)
		}
		if _, ok := KeyFromHex(h); !ok {
			t.Fatalf("%q: hex part not a file name the store writes", s)
		}
	})
}
