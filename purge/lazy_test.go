package purge

import (
	"testing"

	"ccm/jsonstr"
)

// TestLostResultLen: the constant length of the synthesised result text
// is the length jsonstr writes for it (it is no longer computed at
// package initialisation).
func TestLostResultLen(t *testing.T) {
	if want := len(jsonstr.Append(nil, lostResultText)); lostResultLen != want {
		t.Fatalf("lostResultLen = %d, jsonstr writes %d bytes", lostResultLen, want)
	}
}
