package hooklib

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCapture1MB is one PostToolUse run capturing a 1 MB Bash output
// (each iteration a new output, so nothing is deduplicated).
func BenchmarkCapture1MB(b *testing.B) {
	s := newSandbox(&testing.T{})
	line := "ok  \tccm/some/package\t0.123s coverage: 81.2% of statements\n"
	body := strings.Repeat(line, 1_000_000/len(line))
	b.SetBytes(int64(len(body)))
	for i := 0; b.Loop(); i++ {
		in := s.bashCall("s1", "go test ./...", body+strconv.Itoa(i))
		Run(context.Background(), Options{Event: PostToolUse, ClaudeDir: s.claude, Stdin: bytes.NewReader([]byte(in)), Stdout: io.Discard, Lookup: s.env.lookup})
	}
}
