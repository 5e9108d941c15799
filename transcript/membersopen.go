package transcript

import (
	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// MembersOpen is Members, except that the value of the last key found,
// when it is an array or an object, is not crossed to find its end: its
// Raw runs from its start to the end of json, as LookupOpen's does. The
// walk stops there (nothing is left to find), so a user record's message,
// which comes after its type and holds its tool results, is crossed once,
// by whatever reads its content, instead of twice.
func MembersOpen(json string, keys []string, out []gjson.Result) {
	b := rawjson.Bytes(json)
	clear(out)
	left := len(keys)
	wanted := func(k []byte) int {
		for n, key := range keys {
			if out[n].Raw == "" && rawjson.KeyIs(k, key) {
				return n
			}
		}
		return -1
	}
	open := func(k []byte, vs int) bool {
		if left != 1 || vs >= len(b) || b[vs] != '[' && b[vs] != '{' {
			return false
		}
		at := wanted(k)
		if at >= 0 {
			out[at] = gjson.Result{Type: gjson.JSON, Raw: json[vs:], Index: vs}
		}
		return at >= 0
	}
	rawjson.MembersUntil(b, rawjson.SkipSpace(b, 0), open, func(it rawjson.Item) bool {
		if at := wanted(it.Key); at >= 0 {
			raw := json[it.Value:it.End]
			out[at] = gjson.Result{Type: rawType(raw), Raw: raw, Index: it.Value}
			left--
		}
		return left > 0
	})
}

// MembersOpen is MembersOpen on the record.
func (r Record) MembersOpen(keys []string, out []gjson.Result) { MembersOpen(r.s, keys, out) }
