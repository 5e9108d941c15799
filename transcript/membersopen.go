package transcript

import (
	"unsafe"

	"github.com/tidwall/gjson"

	"ccm/internal/jsonscan"
)

// MembersOpen is Members, except that the value of the last key found,
// when it is an array or an object, is not crossed to find its end: its
// Raw runs from its start to the end of json, as LookupOpen's does. The
// walk stops there (nothing is left to find), so a user record's message,
// which comes after its type and holds its tool results, is crossed once,
// by whatever reads its content, instead of twice.
func MembersOpen(json string, keys []string, out []gjson.Result) {
	b := unsafe.Slice(unsafe.StringData(json), len(json))
	clear(out)
	left := len(keys)
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = skipWS(b, i+1)
	for left > 0 && i < len(b) && b[i] == '"' {
		ke := jsonscan.StringEnd(b, i+1)
		if ke < 0 {
			return
		}
		k := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		vs := skipWS(b, i+1)
		at := -1
		for n, key := range keys {
			if out[n].Raw == "" && keyIs(k, key) {
				at = n
				break
			}
		}
		if at >= 0 && left == 1 && vs < len(b) && (b[vs] == '[' || b[vs] == '{') {
			out[at] = gjson.Result{Type: gjson.JSON, Raw: json[vs:], Index: vs}
			return
		}
		ve := jsonscan.ValueEnd(b, vs)
		if ve < 0 {
			return
		}
		if at >= 0 {
			raw := json[vs:ve]
			out[at] = gjson.Result{Type: rawType(raw), Raw: raw, Index: vs}
			left--
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

// MembersOpen is MembersOpen on the record.
func (r Record) MembersOpen(keys []string, out []gjson.Result) { MembersOpen(r.s, keys, out) }
