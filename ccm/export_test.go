package ccm

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"testing"
)

// Export reads content verified, as Open does, without counting an
// access or writing anything to the store.
func TestExportCountsNoAccess(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	k := put(t, s, "exported content", PinNone)
	before := snapshot(t, s.Root())
	rc, m, err := s.Export(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "exported content" || m.BytesUncompressed != int64(len(b)) {
		t.Fatalf("export: %q %v %+v", b, err, m)
	}
	sameSnapshot(t, before, snapshot(t, s.Root()))
	if m2, _ := s.Stat(k); m2.AccessCount != 0 {
		t.Errorf("access count %d after an export, want 0", m2.AccessCount)
	}
}

// PutChecked stores content under a key from outside only when the key
// names it, b2s keys included.
func TestPutChecked(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	content := []byte("content of an older tool's blob\n")
	h := newBlake2s64()
	h.Write(content)
	b2 := Key("b2s:" + hex.EncodeToString(h.Sum(nil)))
	b := s.NewBatch()
	if err := b.PutChecked(ctx, b2, content, Source{Type: "json"}, PinSoft, "kept"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutChecked(ctx, KeyOf([]byte("other")), content, Source{}, PinNone, ""); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a key that does not name the content: %v, want ErrCorrupt", err)
	}
	if err := b.PutChecked(ctx, Key("../../x"), content, Source{}, PinNone, ""); err == nil {
		t.Error("an invalid key was accepted")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, b2); got != string(content) {
		t.Errorf("b2s content %q", got)
	}
	m, err := s.Stat(b2)
	if err != nil || m.Source.Type != "json" || m.Pinned.Level != PinSoft {
		t.Errorf("b2s meta %+v %v", m, err)
	}
	if _, err := s.Stat(KeyOf([]byte("other"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("refused content was stored: %v", err)
	}
}
