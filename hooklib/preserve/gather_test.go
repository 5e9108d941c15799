package preserve

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"ccm/internal/synth"
	"ccm/transcript/worklog"
)

// TestGatherSameAsStreaming: Gather, which maps the file and reads the
// region from memory, finds the same facts as the streaming extractor
// over the bytes after the last compact boundary, and they stay intact
// after the mapping is released (a fact that pointed into the mapping
// would fault or change here).
func TestGatherSameAsStreaming(t *testing.T) {
	for _, o := range []synth.Options{
		{Seed: 1, TargetBytes: 400_000, Version: "2.1.330", Progress: true, Thinking: true, Sidechains: true},
		{Seed: 7, Turns: 20, Compactions: 3, Rewinds: 1, Pins: true},
		{Seed: 9, Turns: 3, InFlight: true},
	} {
		var buf bytes.Buffer
		if _, err := synth.Generate(&buf, o); err != nil {
			t.Fatal(err)
		}
		if o.InFlight {
			// And a torn last line: half of a record that fails a test.
			rec := `{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","is_error":true,"content":"FAIL"}]}}`
			buf.WriteString(rec[:len(rec)/2])
		}
		data := buf.Bytes()
		path := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, from, to, err := Gather(path, true)
		if err != nil {
			t.Fatalf("seed %d: %v", o.Seed, err)
		}
		start := int64(0)
		if i := bytes.LastIndex(data, []byte(`"subtype":"compact_boundary"`)); i >= 0 {
			start = int64(bytes.LastIndexByte(data[:i], '\n') + 1)
		}
		if o.Compactions > 0 && start == 0 {
			t.Fatalf("seed %d: no compact boundary generated", o.Seed)
		}
		if from != start || to != int64(len(data)) {
			t.Errorf("seed %d: read %d-%d, want %d-%d", o.Seed, from, to, start, len(data))
		}
		want, err := worklog.Gather(bytes.NewReader(data[start:]))
		if err != nil {
			t.Fatal(err)
		}
		if want.Records == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: the facts differ from the streaming extractor's (records %d vs %d, %d vs %d files)", o.Seed, got.Records, want.Records, len(got.Files), len(want.Files))
		}
	}
}

// TestGatherBadInput: a missing file, a directory and an empty file.
func TestGatherBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, _, _, err := Gather(filepath.Join(dir, "missing.jsonl"), true); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, _, _, err := Gather(dir, true); err == nil {
		t.Error("a directory was read as a transcript")
	}
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	if f, from, to, err := Gather(empty, true); err != nil || f.Records != 0 || from != 0 || to != 0 {
		t.Errorf("empty file: %v records, %d-%d, %v", f, from, to, err)
	}
}
