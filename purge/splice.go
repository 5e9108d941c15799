package purge

import (
	"sort"

	"github.com/tidwall/gjson"
)

// edit replaces line[off:off+n] with repl.
type edit struct {
	off, n int
	repl   []byte
}

// applyEdits splices non-overlapping edits into line and returns the new
// line in buf (reused). Bytes outside the edits are copied unchanged, so
// key order, escapes and non-ASCII text stay exactly as they were.
func applyEdits(buf, line []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].off < edits[j].off })
	buf = buf[:0]
	pos := 0
	for _, e := range edits {
		buf = append(buf, line[pos:e.off]...)
		buf = append(buf, e.repl...)
		pos = e.off + e.n
	}
	return append(buf, line[pos:]...)
}

// valueEdit replaces the raw value a gjson result found in line.
func valueEdit(res gjson.Result, repl []byte) edit {
	return edit{off: res.Index, n: len(res.Raw), repl: repl}
}

// withoutElements rebuilds a JSON array keeping the elements whose index
// is not marked, each element's bytes unchanged.
func withoutElements(arr gjson.Result, drop []bool) []byte {
	out := []byte{'['}
	i, n := 0, 0
	arr.ForEach(func(_, v gjson.Result) bool {
		if i >= len(drop) || !drop[i] {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, v.Raw...)
			n++
		}
		i++
		return true
	})
	return append(out, ']')
}
