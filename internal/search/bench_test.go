package search

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkIndexSessions indexes eight 16 MB generated sessions afresh
// with two workers, as a first build does.
func BenchmarkIndexSessions(b *testing.B) {
	dir := b.TempDir()
	var total int64
	for i := 0; i < 8; i++ {
		tr := filepath.Join(dir, "claude", "projects", "-p", fmt.Sprintf("s%d.jsonl", i))
		os.MkdirAll(filepath.Dir(tr), 0o700)
		f, _ := os.Create(tr)
		genTo(b, f, int64(i+1), 16<<20)
		f.Close()
		fi, _ := os.Stat(tr)
		total += fi.Size()
	}
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		home := filepath.Join(dir, "home", fmt.Sprint(i))
		ix, err := Open(b.Context(), Dir(home))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Update(b.Context(), Sources{ConfigDir: filepath.Join(dir, "claude"), Jobs: 2}); err != nil {
			b.Fatal(err)
		}
		ix.Close()
		os.RemoveAll(home)
	}
}
