package search

import (
	"bytes"
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

// warmDir makes a config dir of n sessions (hard links of one small
// generated transcript, one in ten with a subagent) and indexes it.
func warmDir(b *testing.B, n int) (config, home string) {
	dir := b.TempDir()
	src := filepath.Join(dir, "t.jsonl")
	f, _ := os.Create(src)
	genTo(b, f, 1, 64<<10)
	f.Close()
	config = filepath.Join(dir, "claude")
	for i := 0; i < n; i++ {
		p := filepath.Join(config, "projects", fmt.Sprintf("-home-u-proj%d", i%200))
		os.MkdirAll(p, 0o700)
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		os.Link(src, filepath.Join(p, id+".jsonl"))
		if i%10 == 0 {
			os.MkdirAll(filepath.Join(p, id, "subagents"), 0o700)
			os.Link(src, filepath.Join(p, id, "subagents", "agent-a.jsonl"))
		}
	}
	home = filepath.Join(dir, "home")
	ix, err := Open(b.Context(), Dir(home))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Update(b.Context(), Sources{ConfigDir: config}); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	return config, home
}

// BenchmarkWarmUpdate is a search's update when nothing changed, over
// 11,000 transcripts.
func BenchmarkWarmUpdate(b *testing.B) {
	config, home := warmDir(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix, err := Open(b.Context(), Dir(home))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Update(b.Context(), Sources{ConfigDir: config}); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

// BenchmarkGrownUpdate is a search's update after one session grew by
// 1 MB, over 11,000 transcripts.
func BenchmarkGrownUpdate(b *testing.B) {
	config, home := warmDir(b, 10000)
	grow := filepath.Join(config, "projects", "-home-u-proj7", fmt.Sprintf("%08x-0000-4000-8000-%012x", 7, 7)+".jsonl")
	data, _ := os.ReadFile(grow)
	os.Remove(grow)
	os.WriteFile(grow, data, 0o600)
	var more bytes.Buffer
	genTo(b, &more, 2, 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f, _ := os.OpenFile(grow, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(more.Bytes())
		f.Close()
		b.StartTimer()
		ix, err := Open(b.Context(), Dir(home))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Update(b.Context(), Sources{ConfigDir: config}); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
