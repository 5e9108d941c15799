package ccm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPutAs: content from outside goes in under the key its stub names
// only when it hashes to that key, a sha256 key and a b2s key (Python's
// hashlib gave the one below) alike; anything else is refused.
func TestPutAs(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	content := strings.Repeat("exported tool output\n", 300)
	key := KeyOf([]byte(content))
	added, err := s.PutAs(ctx, key, strings.NewReader(content), Source{})
	if err != nil || !added {
		t.Fatalf("PutAs = %v, %v", added, err)
	}
	if got, err := s.Get(ctx, key); err != nil || string(got) != content {
		t.Fatalf("Get after PutAs: %v", err)
	}
	if added, err := s.PutAs(ctx, key, strings.NewReader(content), Source{}); err != nil || added {
		t.Errorf("second PutAs = %v, %v; want not added", added, err)
	}
	other := KeyOf([]byte("something else"))
	if _, err := s.PutAs(ctx, other, strings.NewReader(content), Source{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("content under another key: %v", err)
	}

	b2 := Key("b2s:a9f77bd4041bca81")
	legacy := strings.Repeat("legacy hook output\n", 100)
	if _, err := s.PutAs(ctx, b2, strings.NewReader(legacy+"x"), Source{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong content for a b2s key: %v", err)
	}
	if _, err := s.Stat(b2); err == nil {
		t.Error("refused content was stored")
	}
	if added, err := s.PutAs(ctx, b2, strings.NewReader(legacy), Source{}); err != nil || !added {
		t.Fatalf("b2s PutAs = %v, %v", added, err)
	}
	if got, err := s.Get(ctx, b2); err != nil || string(got) != legacy {
		t.Errorf("Get of the b2s blob: %v", err)
	}
}
