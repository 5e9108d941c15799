package search

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccm/internal/textindex"
	"ccm/transcript"
)

// Throwaway: the design comparison's input and this engine's figures.
func TestZZDumpDocs(t *testing.T) {
	src := os.Getenv("DESIGN_SRC")
	if src == "" {
		t.Skip("DESIGN_SRC not set")
	}
	f, _ := os.Open(src)
	out, _ := os.Create("/tmp/docs.txt")
	w := bufio.NewWriterSize(out, 1<<20)
	r := transcript.NewReader(f)
	r.Classify = false
	x := &Extractor{}
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		text, rec := x.Text(l.Body())
		if rec.Kind == 0 {
			continue
		}
		w.WriteString(strings.ReplaceAll(strings.ReplaceAll(text, "\n", " "), "\r", " "))
		w.WriteByte('\n')
	}
	w.Flush()
	out.Close()
}

func TestZZEngine(t *testing.T) {
	data, err := os.ReadFile("/tmp/docs.txt")
	if err != nil {
		t.Skip("no /tmp/docs.txt")
	}
	start := time.Now()
	c0 := cpu()
	b := textindex.NewBuilder(len(data) / 16)
	n := 0
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		b.Start(textindex.Doc{})
		b.AddText(line)
		n++
	}
	var buf bytes.Buffer
	b.WriteTo(&buf)
	el := time.Since(start)
	c := cpu() - c0
	t.Logf("textindex: %d docs, %.1f MB text in %.2f s wall, %.2f s CPU: %.1f MB per CPU second; index %.1f MB (%.1f%% of the text)",
		n, float64(len(data))/1e6, el.Seconds(), c, float64(len(data))/1e6/c, float64(buf.Len())/1e6, 100*float64(buf.Len())/float64(len(data)))
}

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
