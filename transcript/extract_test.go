package transcript

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// TestExtractMatchesGJSON checks the index's raw walk against an
// independent reading of the same lines with gjson, on every corpus file
// and on generated files with every record shape and defect (the corpus
// part only when ../shared/corpus is there).
func TestExtractMatchesGJSON(t *testing.T) {
	var files [][]byte
	least := 1000 // records the generated files alone hold at the least
	if shared, ok := testutil.LookupShared(t); ok {
		least = 2000
		for _, rel := range []string{testutil.Spotter, testutil.SpotterAgent, testutil.Acompact, testutil.Demo, testutil.FlatAgent, testutil.MetaOnly} {
			b, err := os.ReadFile(filepath.Join(shared, "corpus", "claude-config", rel))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b)
		}
	} else {
		t.Logf("corpus part not run: no corpus at %s; generated files only", shared)
	}
	for _, opt := range []synth.Options{
		{Seed: 1, Turns: 25, Thinking: true, Progress: true, Images: true, Compactions: 1, Sidechains: true, Rewinds: 2, Pins: true, Defects: synth.AllDefects},
		{Seed: 2, Turns: 15, Version: "2.1.330", Thinking: true, Progress: true, Images: true},
	} {
		var buf bytes.Buffer
		if _, err := synth.Generate(&buf, opt); err != nil {
			t.Fatal(err)
		}
		files = append(files, buf.Bytes())
	}
	checked := 0
	for _, data := range files {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !ValidJSON(line) || !gjson.ParseBytes(line).IsObject() {
				continue
			}
			var f lineFacts
			var sz Sizes
			if !extract(line, &f, &sz) {
				t.Fatalf("extract rejected a valid line: %.200s", line)
			}
			g := gjson.ParseBytes(line)
			if f.TypeName != g.Get("type").String() || f.UUID != g.Get("uuid").String() ||
				f.Parent != g.Get("parentUuid").String() || f.MsgID != g.Get("message.id").String() ||
				f.Sidechain != g.Get("isSidechain").Bool() || f.Meta != g.Get("isMeta").Bool() {
				t.Fatalf("envelope differs: %+v for %.200s", f, line)
			}
			if want := len(g.Get("toolUseResult").Raw); sz.ToolUseResult != want {
				t.Fatalf("toolUseResult size %d, want %d", sz.ToolUseResult, want)
			}
			blocks := g.Get("message.content")
			if blocks.IsArray() {
				arr := blocks.Array()
				if len(arr) != len(f.Blocks) {
					t.Fatalf("%d blocks, want %d: %.200s", len(f.Blocks), len(arr), line)
				}
				results := 0
				for i, b := range arr {
					bf := f.Blocks[i]
					id := b.Get("id").String() + b.Get("tool_use_id").String()
					if bf.TypeName != b.Get("type").String() || bf.ID != id || bf.Name != b.Get("name").String() || bf.IsError != b.Get("is_error").Bool() {
						t.Fatalf("block %d differs: %+v vs %s", i, bf, b.Raw[:min(len(b.Raw), 200)])
					}
					if bf.Type == BlockText && bf.Empty != (b.Get("text").String() == "") {
						t.Fatalf("empty text %v for %s", bf.Empty, b.Raw)
					}
					if b.Get("type").String() == "tool_result" {
						if sz.ToolResults[results].Bytes != len(b.Get("content").Raw) {
							t.Fatalf("tool result size %d, want %d", sz.ToolResults[results].Bytes, len(b.Get("content").Raw))
						}
						results++
					}
				}
			}
			if text, images := gjsonText(g.Get("message.content")); f.TextBytes != text || f.Images != images {
				t.Fatalf("text %d bytes and %d images, want %d and %d: %.300s", f.TextBytes, f.Images, text, images, line)
			}
			checked++
		}
	}
	if checked < least {
		t.Fatalf("only %d records checked", checked)
	}
}

// gjsonText measures, with gjson, the text a message content sends to the
// model as Facts.TextBytes counts it (escaped bytes, strings without their
// quotes, tool inputs as written) and its images.
func gjsonText(content gjson.Result) (int64, int) {
	str := func(v gjson.Result) int64 {
		if v.Type != gjson.String || v.Str == "" {
			return 0
		}
		return int64(len(v.Raw) - 2)
	}
	if content.Type == gjson.String {
		return str(content), 0
	}
	var n int64
	images := 0
	content.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			n += str(b.Get("text"))
		case "thinking":
			n += str(b.Get("thinking"))
		case "tool_use":
			n += str(b.Get("name"))
			if in := b.Get("input"); in.Exists() {
				if in.Type == gjson.String {
					n += str(in)
				} else {
					n += int64(len(in.Raw))
				}
			}
		case "image":
			images++
		case "tool_result":
			c := b.Get("content")
			if c.Type == gjson.String {
				n += str(c)
			}
			c.ForEach(func(_, e gjson.Result) bool {
				switch e.Get("type").Str {
				case "text":
					n += str(e.Get("text"))
				case "image":
					images++
				}
				return true
			})
		}
		return true
	})
	return n, images
}
