package ccm

import (
	"testing"
	"time"
)

// FuzzIndexLine: any bytes as a pack index line are decoded and replayed
// or refused with an error, never a panic; a replayed put always names a
// valid pack id and codec.
func FuzzIndexLine(f *testing.F) {
	m := &Meta{Key: KeyOf([]byte("x")), CreatedAt: time.Unix(1, 0), Pinned: PinInfo{Level: PinSoft, Reason: "r"},
		Source: Source{ToolName: "Bash", Command: `echo "a\nb"`}}
	f.Add(putLine(m, packLoc{pack: "0123456789abcdef", off: 8, clen: 10, codec: S2, crc: 7}, true))
	f.Add(seenLine(m.Key, time.Unix(2, 0), PinHard, "why"))
	f.Add(delLine(m.Key, time.Unix(3, 0), "pruned"))
	f.Add([]byte(`{"op":"put","key":"sha256:` + "../../etc" + `","pack":"../x"}`))
	f.Add([]byte(`{"op":"put","key":"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		idx := &packIndex{entries: map[Key]*packEntry{}}
		idx.replay(append(line, '\n'))
		for k, e := range idx.entries {
			if _, err := ParseKey(string(k)); err != nil || !validPackID(e.loc.pack) {
				t.Fatalf("replayed %q: key %q pack %q", line, k, e.loc.pack)
			}
		}
	})
}

// FuzzIndexCache: any bytes after a cache header decode or are refused,
// never a panic.
func FuzzIndexCache(f *testing.F) {
	idx := &packIndex{entries: map[Key]*packEntry{}}
	idx.replay(putLine(&Meta{Key: KeyOf([]byte("y")), CreatedAt: time.Unix(1, 0)},
		packLoc{pack: "00000000000000ff", off: 8, clen: 3, codec: None}, false))
	var b []byte
	b = append(b, 1, 0, 0) // lines, bad lines, then the pack table and entries
	b = append(b, 1, 16)
	b = append(b, "00000000000000ff"...)
	b = append(b, 1)
	for _, e := range idx.entries {
		e.loc.slot = 0
		b = appendEntry(b, e)
	}
	f.Add(b)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, body []byte) {
		d := &decoder{b: body, s: string(body)}
		(&packIndex{}).decodeCache(d)
	})
}
