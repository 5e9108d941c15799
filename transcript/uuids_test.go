package transcript

import (
	"fmt"
	"testing"
)

// TestLookupFindsTheFirstRecordOfEachUUID fills the uuid table past
// several growths, with repeated and missing uuids.
func TestLookupFindsTheFirstRecordOfEachUUID(t *testing.T) {
	const n = 5000
	recs := make([]Facts, n)
	for i := range recs {
		recs[i].SetUUID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i%3000, i%3000)) // 2000 repeats
		recs[i].SetTypeName("user")
	}
	ix := NewIndex(recs)
	for i := range 3000 {
		u := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		j, ok := ix.Lookup(u)
		if !ok || j != i {
			t.Fatalf("Lookup(%s) = %d, %v; want %d (the first record that carries it)", u, j, ok, i)
		}
	}
	if len(ix.Dups) != n-3000 {
		t.Errorf("%d duplicates, want %d", len(ix.Dups), n-3000)
	}
	for _, u := range []string{"", "00000000-0000-4000-8000-999999999999", "not a uuid"} {
		if j, ok := ix.Lookup(u); ok {
			t.Errorf("Lookup(%q) = %d, want none", u, j)
		}
	}
}
