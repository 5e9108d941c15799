package prune

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// transcriptText returns n bytes shaped like transcript lines: JSON with
// escaped tool output, a stub every few lines.
func transcriptText(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"parentUuid":"%08d-aaaa","isSidechain":false,"userType":"external","cwd":"/home/user/src/project","sessionId":"s1","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"`, i, i)
		if i%5 == 0 {
			fmt.Fprintf(&b, `[CCM_CACHED]\nkey: sha256:%064x\nsource: Bash make\nbytes: 1234\nlines: 5\npinned: none\n[/CCM_CACHED]`, i)
		} else {
			b.WriteString(strings.Repeat(`drwxr-xr-x  5 user staff  160 Jan  1 10:00 src\n-rw-r--r--  1 user staff 1234 Jan  1 10:00 main.go: some output; status=ok sha=abc\n`, 1+i%40))
		}
		b.WriteString("\"}]},\"uuid\":\"x\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\n")
	}
	return b.Bytes()
}

func BenchmarkFindKeys(b *testing.B) {
	data := transcriptText(64 << 20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		refs := Refs{}
		findKeys(data, refs)
	}
}
