// Splicing: this file edits one JSON line in place: each edit replaces the raw
// bytes of one value at the offset gjson reports, and every byte outside
// the edits is copied unchanged, so key order, escapes and non-ASCII text
// stay exactly as they were. ccm purge cuts values out this way and ccm
// restore puts them back.

package rawjson

import (
	"sort"

	"github.com/tidwall/gjson"
)

// Edit replaces line[Off:Off+N] with Repl.
type Edit struct {
	Off, N int
	Repl   []byte
}

// Splice splices non-overlapping edits into line and returns the new line
// in buf (reused). It sorts edits by offset.
func Splice(buf, line []byte, edits []Edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].Off < edits[j].Off })
	buf = buf[:0]
	pos := 0
	for _, e := range edits {
		buf = append(buf, line[pos:e.Off]...)
		buf = append(buf, e.Repl...)
		pos = e.Off + e.N
	}
	return append(buf, line[pos:]...)
}

// ReplaceValue is the edit that replaces the raw value res, which gjson found in
// the line, with repl.
func ReplaceValue(res gjson.Result, repl []byte) Edit {
	return Edit{Off: res.Index, N: len(res.Raw), Repl: repl}
}
