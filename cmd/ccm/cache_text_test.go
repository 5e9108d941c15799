package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"ccm/ccm"
	"ccm/ccm/stub"
)

// TestCacheGetStreamedText: content over maxInMemoryGet is decoded as it
// streams, to the same text and lines as content read whole; a value
// that is not a well-formed string is reported, not half-decoded.
func TestCacheGetStreamedText(t *testing.T) {
	_, cache := storeEnv(t)
	st, err := ccm.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i := range 5000 {
		text.WriteString("output line \"")
		text.WriteString(strings.Repeat("é", i%7))
		text.WriteString("\" \\ 🚀\n")
	}
	raw, _ := json.Marshal(text.String()) // \u escapes for nothing but control bytes
	put := func(b []byte) string {
		k, err := st.Put(context.Background(), b, ccm.Source{Type: stub.RawValueType, ToolName: "Bash"}, ccm.PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		return string(k)
	}
	key := put(raw)
	bad := put([]byte(`"cut off \u12`))
	for _, limit := range []int64{1 << 30, 4096} {
		maxInMemoryGet = limit
		code, out, errs := runCCM("", "cache", "get", key)
		if code != 0 || out != text.String() {
			t.Errorf("limit %d: get: exit %d, %d bytes (want %d), %s", limit, code, len(out), text.Len(), errs)
		}
		// Lines 4999 and 5000 are i = 4998 (4998 % 7 = 0) and 4999.
		code, out, _ = runCCM("", "cache", "get", "--lines", "4999:", key)
		if want := "output line \"\" \\ 🚀\noutput line \"é\" \\ 🚀\n"; code != 0 || out != want {
			t.Errorf("limit %d: --lines 4999: exit %d, %q", limit, code, out)
		}
		code, out, _ = runCCM("", "cache", "get", "--raw", key)
		if code != 0 || out != string(raw) {
			t.Errorf("limit %d: --raw: exit %d, %d bytes", limit, code, len(out))
		}
		code, _, errs = runCCM("", "cache", "get", bad)
		if code != 2 || !strings.Contains(errs, "not a well-formed JSON string (--raw writes it as stored)") {
			t.Errorf("limit %d: a malformed string: exit %d, %q", limit, code, errs)
		}
	}
	maxInMemoryGet = 256 << 20
}
