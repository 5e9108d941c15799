package transcript

import (
	"bytes"
	"runtime"
	"testing"

	"ccm/internal/synth"
)

// indexBytesPerRecord is the bound on what an index keeps per record,
// everything included (Facts, strings, blocks, the uuid map). It was
// about 480 bytes before the index was made compact (see compact.go); on
// this small file chunks and tables carry some slack: the 1 GB benchmark
// file measures 232.
const indexBytesPerRecord = 300

// TestIndexSizePerRecord builds the index of a generated benchmark file
// (the mix ccm's speed figures use) and measures the live heap it holds
// once built: it must stay under indexBytesPerRecord a record, so that a
// 1 GB transcript's index fits in a few tens of megabytes.
func TestIndexSizePerRecord(t *testing.T) {
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Benchmark(42, 24<<20)); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := Build(bytes.NewReader(data), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := ix.Len()
	if n < 1000 {
		t.Fatalf("only %d records: the file is too small to measure", n)
	}
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
	t.Logf("%d records, %d bytes of index a record", n, per)
	if per > indexBytesPerRecord {
		t.Errorf("the index holds %d bytes a record, over the bound of %d", per, indexBytesPerRecord)
	}
	runtime.KeepAlive(ix)
	runtime.KeepAlive(data)
}
