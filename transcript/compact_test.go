package transcript

import (
	"bytes"
	"reflect"
	"testing"

	"ccm/internal/synth"

	"github.com/tidwall/gjson"
)

// TestFactsMatchTheirLines holds every string, block and usage figure the
// compact index keeps to what gjson reads from the same line.
func TestFactsMatchTheirLines(t *testing.T) {
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Options{Seed: 7, Turns: 30, Thinking: true, Images: true,
		Compactions: 1, Sidechains: true, Pins: true}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	ix, err := Build(bytes.NewReader(data), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	usages, blocks := 0, 0
	for i := range ix.Len() {
		f := ix.Rec(i)
		line := data[f.Offset : f.Offset+int64(f.Size)]
		g := gjson.ParseBytes(line)
		for _, c := range []struct{ name, got, want string }{
			{"uuid", f.UUID(), g.Get("uuid").String()},
			{"parentUuid", f.Parent(), g.Get("parentUuid").String()},
			{"logicalParentUuid", f.LogicalParent(), g.Get("logicalParentUuid").String()},
			{"type", f.TypeName(), g.Get("type").String()},
			{"message.id", f.MsgID(), g.Get("message.id").String()},
			{"message.role", f.Role(), g.Get("message.role").String()},
		} {
			if c.got != c.want {
				t.Fatalf("line %d: %s %q, the line has %q", f.Line, c.name, c.got, c.want)
			}
		}
		if u := g.Get("message.usage"); u.Exists() {
			usages++
			want := Usage{Input: u.Get("input_tokens").Int(), CacheRead: u.Get("cache_read_input_tokens").Int(),
				CacheCreation: u.Get("cache_creation_input_tokens").Int(), Output: u.Get("output_tokens").Int()}
			if !f.HasUsage || f.Usage() != want {
				t.Fatalf("line %d: usage %+v, the line has %+v", f.Line, f.Usage(), want)
			}
		}
		content := g.Get("message.content")
		if !content.IsArray() {
			continue
		}
		arr := content.Array()
		if f.NumBlocks() != len(arr) {
			t.Fatalf("line %d: %d blocks, the line has %d", f.Line, f.NumBlocks(), len(arr))
		}
		for b, v := range arr {
			bf := f.Block(b)
			id := v.Get("id").String()
			if id == "" {
				id = v.Get("tool_use_id").String()
			}
			if bf.TypeName != v.Get("type").String() || bf.ID != id || bf.Name != v.Get("name").String() ||
				bf.IsError != v.Get("is_error").Bool() {
				t.Fatalf("line %d block %d: %+v, the line has %s", f.Line, b, bf, v.Raw)
			}
			blocks++
		}
	}
	if usages == 0 || blocks == 0 {
		t.Fatalf("%d usages and %d blocks compared: the file does not exercise the index", usages, blocks)
	}
}

// TestOverlayLeavesTheIndexAlone sets new parents and blocks on copies of
// an index's facts through an overlay: the copies read the new values and
// everything else they had, the index reads its own, and its table does
// not grow.
func TestOverlayLeavesTheIndexAlone(t *testing.T) {
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Options{Seed: 3, Turns: 10}); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(&buf, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	strs, blks := len(ix.tab.strs), len(ix.tab.blocks)
	i := -1
	for k := range ix.Len() {
		if ix.Rec(k).NumBlocks() > 0 && ix.Rec(k).Parent() != "" {
			i = k
			break
		}
	}
	if i < 0 {
		t.Fatal("no record with blocks and a parent")
	}
	orig := *ix.Rec(i)
	origBlocks := orig.Blocks()
	ov := ix.Overlay()
	f := orig
	ov.Adopt(&f)
	f.SetParent("new-parent")
	f.SetBlocks([]BlockFacts{{Type: BlockToolResult, TypeName: "tool_result", ID: "toolu_new", IsError: true}})
	if f.Parent() != "new-parent" || f.NumBlocks() != 1 || f.Block(0).ID != "toolu_new" || f.Block(0).TypeName != "tool_result" {
		t.Fatalf("the copy reads parent %q and blocks %+v", f.Parent(), f.Blocks())
	}
	if f.UUID() != orig.UUID() || f.TypeName() != orig.TypeName() || f.MsgID() != orig.MsgID() || f.Usage() != orig.Usage() {
		t.Fatalf("the copy lost what it had: uuid %q type %q", f.UUID(), f.TypeName())
	}
	g := ix.Rec(i)
	if g.Parent() != orig.Parent() || !reflect.DeepEqual(g.Blocks(), origBlocks) {
		t.Fatalf("the index's record changed: parent %q, blocks %+v", g.Parent(), g.Blocks())
	}
	if len(ix.tab.strs) != strs || len(ix.tab.blocks) != blks {
		t.Fatalf("the index's table grew: %d strings (was %d), %d blocks (was %d)", len(ix.tab.strs), strs, len(ix.tab.blocks), blks)
	}
	// Facts built by hand and adopted share the overlay too.
	var h Facts
	ov.Adopt(&h)
	h.SetUUID("hand-made")
	h.SetTypeName(orig.TypeName())
	if h.UUID() != "hand-made" || h.TypeName() != orig.TypeName() || h.Parent() != "" {
		t.Fatalf("hand-made facts read uuid %q type %q parent %q", h.UUID(), h.TypeName(), h.Parent())
	}
}
