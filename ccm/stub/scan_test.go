package stub

import (
	"encoding/json"
	"strings"
	"testing"

	"ccm/ccm"
)

// KeyScanner finds the keys of the stubs in raw JSON lines, whatever way
// the stream is cut into writes, and ignores keys outside stubs.
func TestKeyScanner(t *testing.T) {
	keyA := ccm.KeyOf([]byte("a"))
	keyB := ccm.KeyOf([]byte("b"))
	keyC := ccm.KeyOf([]byte("c"))
	keyD := ccm.Key("b2s:0123456789abcdef")
	keyE := ccm.KeyOf([]byte("e"))
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	v2 := Stub{Key: keyA, Source: `Bash echo "hi"`, Bytes: 3}.String()
	v3 := "[CCM_CACHED]\n~tokens: 12k\nlines: 4\n[/CCM_CACHED]\nRetrieve: ccm-get.py " + string(keyD) + " [--grep P]"
	v1 := "[CCM_CACHED]\npath: ~/.claude/cache/ccm/blobs/" + keyC.Hex() + ".zst\nbytes: 5\n[/CCM_CACHED]"
	nested := quote(`{"content":` + quote(Stub{Key: keyB}.String()) + `}`)
	lines := strings.Join([]string{
		`{"type":"user","message":{"content":[{"type":"tool_result","content":` + quote(v2) + `}]}}`,
		`{"type":"user","toolUseResult":` + nested + `}`,
		`{"type":"assistant","message":{"content":` + quote(v3) + `}}`,
		`{"type":"user","message":{"content":` + quote(v1) + `}}`,
		// A key outside any stub (an image digest) is not a stub's.
		`{"type":"user","message":{"content":"docker pull x@` + string(keyE) + `"}}`,
		// A start marker without an end marker starts no stub.
		`{"type":"user","message":{"content":"[CCM_CACHED] key: ` + string(keyE) + `"}}`,
	}, "\n") + "\n"
	want := map[ccm.Key]bool{keyA: true, keyB: true, keyC: true, keyD: true}
	for _, step := range []int{1, 2, 7, 11, 12, 100, len(lines)} {
		k := &KeyScanner{}
		for i := 0; i < len(lines); i += step {
			k.Write([]byte(lines[i:min(len(lines), i+step)]))
		}
		k.Flush()
		if len(k.Keys) != len(want) {
			t.Errorf("writes of %d bytes: keys %v, want %v", step, k.Keys, want)
		}
		for key := range want {
			if _, ok := k.Keys[key]; !ok {
				t.Errorf("writes of %d bytes: %s not found", step, key)
			}
		}
	}
}

// A v3 stub at the very end of the stream is found by Flush.
func TestKeyScannerFlush(t *testing.T) {
	keyD := ccm.Key("b2s:0123456789abcdef")
	k := &KeyScanner{}
	k.Write([]byte(`"[CCM_CACHED]\n~tokens: 1k\n[/CCM_CACHED]\nRetrieve: ccm-get.py ` + string(keyD)))
	if len(k.Keys) != 0 {
		t.Fatalf("found before the end: %v", k.Keys)
	}
	k.Flush()
	if _, ok := k.Keys[keyD]; !ok || len(k.Keys) != 1 {
		t.Errorf("keys %v", k.Keys)
	}
}
