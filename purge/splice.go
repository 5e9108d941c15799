package purge

import (
	"github.com/tidwall/gjson"
)

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
