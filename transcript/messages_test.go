package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// refPlaceAttached is the placement Messages used before it went through
// maps: one walk over every message per attached record. It is kept here
// as the reference the faster placement must agree with.
func refPlaceAttached(ix *Index, msgs []Message, rec int) []Message {
	if f := ix.Rec(rec); f.Type == TypeAssistant {
		id := f.MsgID()
		for k := range msgs {
			m := &msgs[k]
			if m.Role != "assistant" {
				continue
			}
			for _, r := range m.Recs {
				if ix.Rec(r).MsgID() != id {
					continue
				}
				m.Recs = append(m.Recs, rec)
				for b := range ix.Rec(rec).NumBlocks() {
					m.Blocks = append(m.Blocks, BlockRef{Rec: rec, Block: b})
				}
				return msgs
			}
		}
		return msgs
	}
	blocks := ix.Rec(rec).Blocks()
	id := ""
	var results, rest []BlockRef
	for b := range blocks {
		if blocks[b].Type == BlockToolResult {
			if id == "" {
				id = blocks[b].ID
			}
			results = append(results, BlockRef{Rec: rec, Block: b})
		} else {
			rest = append(rest, BlockRef{Rec: rec, Block: b})
		}
	}
	hasUse := func(m *Message) bool {
		for _, r := range m.Blocks {
			if b := ix.block(r); b.Type == BlockToolUse && b.ID == id {
				return true
			}
		}
		return false
	}
	for k := range msgs {
		if msgs[k].Role != "assistant" || !hasUse(&msgs[k]) {
			continue
		}
		if k+1 < len(msgs) && msgs[k+1].Role == "user" {
			m := &msgs[k+1]
			at := 0
			for at < len(m.Blocks) && ix.block(m.Blocks[at]).Type == BlockToolResult {
				at++
			}
			m.Blocks = append(m.Blocks[:at], append(results, m.Blocks[at:]...)...)
			m.Blocks = append(m.Blocks, rest...)
			m.Recs = append(m.Recs, rec)
			return msgs
		}
		nm := Message{Role: "user", Recs: []int{rec}, Blocks: append(results, rest...)}
		return append(msgs[:k+1], append([]Message{nm}, msgs[k+1:]...)...)
	}
	return msgs
}

// refMessages is Messages with the reference placement.
func refMessages(ix *Index, c *Chain) []Message {
	saved := c.Attached
	c.Attached = nil
	msgs := ix.Messages(c)
	c.Attached = saved
	for _, a := range c.Attached {
		msgs = refPlaceAttached(ix, msgs, a)
	}
	return msgs
}

func sameMessages(t *testing.T, name string, ix *Index) {
	t.Helper()
	c := ix.ActiveChain()
	got, want := ix.Messages(c), refMessages(ix, c)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %d messages, the reference placement gives %d (or they differ in content)", name, len(got), len(want))
	}
}

// TestMessagesPlaceAttachedAsReference holds the map-based placement of
// attached records to the one-walk-per-record placement, on generated
// sessions with parallel tool results, sidechains, rewinds and planted
// defects, and on every session of the corpus when it is there.
func TestMessagesPlaceAttachedAsReference(t *testing.T) {
	attached := 0
	for seed := int64(1); seed <= 12; seed++ {
		var buf bytes.Buffer
		opt := synth.Options{Seed: seed, Turns: 40, Thinking: true, Progress: true, Images: true,
			Compactions: int(seed % 3), Sidechains: seed%2 == 0, Rewinds: int(seed % 4), Pins: true}
		if seed%3 == 0 {
			opt.Defects = synth.AllDefects
		}
		if _, err := synth.Generate(&buf, opt); err != nil {
			t.Fatal(err)
		}
		ix, err := Build(&buf, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		attached += len(ix.ActiveChain().Attached)
		sameMessages(t, "seed "+strconv.FormatInt(seed, 10), ix)
	}
	if attached == 0 {
		t.Fatal("no generated session has an attached record: the comparison shows nothing")
	}
	dir := filepath.Join(testutil.CorpusConfigDir(t), "projects")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skipf("no corpus under %s: the generated sessions were compared", dir)
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Build(f, BuildOptions{})
		f.Close()
		if err != nil {
			continue // not a transcript: nothing to place
		}
		sameMessages(t, filepath.Base(path), ix)
	}
}
