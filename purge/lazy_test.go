package purge

import (
	"testing"

	"ccm/internal/rawjson"
)

// TestLostResultLen: the constant length of the synthesised result text
// is the length rawjson writes for it (it is no longer computed at
// package initialisation).
func TestLostResultLen(t *testing.T) {
	if want := len(rawjson.Append(nil, lostResultText)); lostResultLen != want {
		t.Fatalf("lostResultLen = %d, rawjson writes %d bytes", lostResultLen, want)
	}
}
