package worklog

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/transcript"
)

// recordFields are the record keys the extractor and the audit read with
// Record.Field; blockFields the content block keys.
var (
	recordFields = []string{"type", "isSidechain", "subtype", "isMeta", "isApiErrorMessage", "message.id",
		"toolUseResult.interrupted", "toolUseResult.task.id"}
	blockFields = []string{"type", "id", "name", "tool_use_id", "is_error", "text"}
)

// TestFieldsAgreeWithGjson: on every record of the corpus and of
// generated transcripts, the fields and blocks the passes now read with
// transcript.Lookup and Field are the ones gjson's Get and ForEach gave
// (the passes' results follow from these).
func TestFieldsAgreeWithGjson(t *testing.T) {
	var files [][]byte
	defects := append(append([]synth.Defect{}, synth.AllDefects...), synth.ClientShapes...)
	for _, o := range []synth.Options{
		synth.Benchmark(1, 2<<20),
		synth.Benchmark(7, 2<<20),
		// Every shape the generator knows, in both formats, so that a
		// plain clone (no corpus) compares over a thousand records too.
		{Seed: 3, Turns: 60, Thinking: true, Progress: true, Images: true, Sidechains: true, Defects: defects},
		{Seed: 4, Turns: 60, Version: "2.1.330", Thinking: true, Progress: true, Images: true, Compactions: 1, Pins: true, Defects: defects},
	} {
		var b bytes.Buffer
		if _, err := synth.Generate(&b, o); err != nil {
			t.Fatal(err)
		}
		files = append(files, b.Bytes())
	}
	if dir, ok := testutil.LookupShared(t); ok {
		filepath.WalkDir(filepath.Join(dir, "corpus", "claude-config", "projects"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".jsonl") {
				if b, err := os.ReadFile(p); err == nil {
					files = append(files, b)
				}
			}
			return nil
		})
	} else {
		t.Log("../shared is absent: generated transcripts only")
	}
	records, blocks := 0, 0
	for _, data := range files {
		rd := transcript.NewReader(bytes.NewReader(data))
		for {
			l, err := rd.Next()
			if err != nil {
				break
			}
			if l.Kind != transcript.Object {
				continue
			}
			records++
			rec := transcript.NewRecord(l.Body())
			for _, k := range recordFields {
				sameResult(t, k, rec.Field(k), rec.Get(k))
			}
			got, want := rec.Lookup("message.content"), rec.Get("message.content")
			if got.Raw != want.Raw || got.Type != want.Type {
				t.Fatalf("message.content: Lookup %.60q, Get %.60q", got.Raw, want.Raw)
			}
			if got.Type == gjson.String && gjson.Parse(got.Raw).Str != want.Str {
				t.Fatalf("string content decodes differently: %.60q", got.Raw)
			}
			var viaBlocks, viaForEach []string
			Blocks(got, func(b gjson.Result) bool { viaBlocks = append(viaBlocks, b.Raw); return true })
			want.ForEach(func(_, b gjson.Result) bool {
				viaForEach = append(viaForEach, b.Raw)
				for _, k := range blockFields {
					sameResult(t, k, transcript.Field(b.Raw, k), b.Get(k))
				}
				for _, k := range []string{"content", "input", "source.data"} {
					if l, g := transcript.Lookup(b.Raw, k), b.Get(k); l.Raw != g.Raw || l.Type != g.Type {
						t.Fatalf("block %s: Lookup %.60q, Get %.60q", k, l.Raw, g.Raw)
					}
				}
				if b.Get("type").Str == "tool_result" {
					if got, want := ResultText(b), gjsonResultText(b); got != want {
						t.Fatalf("ResultText %.60q, gjson %.60q", got, want)
					}
				}
				blocks++
				return true
			})
			if strings.Join(viaBlocks, "\x00") != strings.Join(viaForEach, "\x00") {
				t.Fatalf("Blocks gave %d values, ForEach %d", len(viaBlocks), len(viaForEach))
			}
		}
	}
	t.Logf("%d files, %d records, %d blocks compared", len(files), records, blocks)
	if records < 1000 || blocks < 1000 {
		t.Fatalf("only %d records and %d blocks compared", records, blocks)
	}
}

func sameResult(t *testing.T, path string, got, want gjson.Result) {
	t.Helper()
	if got.Type != want.Type || got.Raw != want.Raw || got.Str != want.Str || got.Bool() != want.Bool() || got.String() != want.String() {
		t.Fatalf("%s: Field %v %.60q, Get %v %.60q", path, got.Type, got.Raw, want.Type, want.Raw)
	}
}

// gjsonResultText is ResultText as it was written with gjson alone.
func gjsonResultText(b gjson.Result) string {
	c := b.Get("content")
	if c.Type == gjson.String {
		return c.Str
	}
	var parts []string
	c.ForEach(func(_, ib gjson.Result) bool {
		if ib.Get("type").Str == "text" {
			parts = append(parts, ib.Get("text").Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}
