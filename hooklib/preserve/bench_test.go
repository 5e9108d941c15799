package preserve

import (
	"os"
	"path/filepath"
	"testing"

	"ccm/internal/synth"
)

// BenchmarkBuild1MB is the PreCompact hook's main path (gather and render)
// over the benchmark script's small transcript (`gen -size 1MB -seed 1`),
// in a directory that is not a repository: what the hook costs besides
// starting the process.
func BenchmarkBuild1MB(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "small.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := synth.Generate(f, synth.Options{Seed: 1, TargetBytes: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Build(Options{Transcript: path, Cwd: dir, Budget: 9000}); err != nil {
			b.Fatal(err)
		}
	}
}
