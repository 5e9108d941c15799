package transcript

import "hash/maphash"

// uuidTable finds the first record that carries a uuid. It is an open
// addressing table of record numbers, hashed by the uuid and compared
// against the record's own uuid: 4 bytes a slot, with no pointer for the
// collector to follow, where a map[string]int32 took about 40 bytes a
// record (4 MB for a 1 GB transcript, once more for every index a purge
// plan builds of the structure it will write).
type uuidTable struct {
	slots []int32 // 1 + a record number, or 0 for a free slot
	n     int
}

var uuidSeed = maphash.MakeSeed()

// find returns the record with uuid u, as get(j) reads record j's uuid.
func (t *uuidTable) find(u string, get func(int) string) (int, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for k := maphash.String(uuidSeed, u) & mask; ; k = (k + 1) & mask {
		j := t.slots[k]
		if j == 0 {
			return 0, false
		}
		if get(int(j-1)) == u {
			return int(j - 1), true
		}
	}
}

// insert records that record i carries uuid u, which no earlier record
// of the table carries.
func (t *uuidTable) insert(i int, u string, get func(int) string) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow(get)
	}
	mask := uint64(len(t.slots) - 1)
	k := maphash.String(uuidSeed, u) & mask
	for t.slots[k] != 0 {
		k = (k + 1) & mask
	}
	t.slots[k] = int32(i + 1)
	t.n++
}

// grow doubles the table and places every record again.
func (t *uuidTable) grow(get func(int) string) {
	old := t.slots
	size := 2 * len(old)
	if size < 64 {
		size = 64
	}
	t.slots = make([]int32, size)
	mask := uint64(size - 1)
	for _, j := range old {
		if j == 0 {
			continue
		}
		k := maphash.String(uuidSeed, get(int(j-1))) & mask
		for t.slots[k] != 0 {
			k = (k + 1) & mask
		}
		t.slots[k] = j
	}
}
