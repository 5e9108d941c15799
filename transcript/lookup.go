package transcript

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// Lookup finds the value at path (object keys joined by '.') in json
// without decoding it: the result has Type, Raw and Index as gjson.Get
// sets them, but Str and Num stay empty. gjson.Get decodes a string result
// in full, so asking where a 10 MB tool output sits cost a 10 MB unescape
// and copy; purge asks that of every large value it stubs, and the copies
// took a third of its CPU. Lookup jumps from quote to quote instead.
//
// json must be a record the index validated: Lookup checks the structure
// it walks (it never reads out of bounds, and an unterminated value or a
// missing key reports a result that does not Exist) but not the contents
// of strings and numbers.
func Lookup(json, path string) gjson.Result {
	b := rawjson.Bytes(json)
	start, end := 0, len(b)
	for _, key := range strings.Split(path, ".") {
		it, ok := rawjson.Member(b[:end], rawjson.SkipSpace(b[:end], start), key)
		if !ok {
			return gjson.Result{}
		}
		start, end = it.Value, it.End
	}
	raw := json[start:end]
	return gjson.Result{Type: rawType(raw), Raw: raw, Index: start}
}

// ForEachMember calls fn with each member of the object v (from Lookup
// or gjson) until fn returns false, like gjson's ForEach but without
// decoding the values: each has Type, Raw and Index (counted from where
// v.Index counts) and an empty Str. gjson's ForEach decodes every string
// member in full, a copy of each megabyte of tool output. v must be valid
// JSON, as Lookup requires.
func ForEachMember(v gjson.Result, fn func(key string, m gjson.Result) bool) {
	b := rawjson.Bytes(v.Raw)
	rawjson.Members(b, rawjson.SkipSpace(b, 0), func(it rawjson.Item) bool {
		key := string(it.Key)
		if bytes.IndexByte(it.Key, '\\') >= 0 {
			key = str(append(append([]byte{'"'}, it.Key...), '"'))
		}
		raw := v.Raw[it.Value:it.End]
		return fn(key, gjson.Result{Type: rawType(raw), Raw: raw, Index: v.Index + it.Value})
	})
}

// ForEachElement calls fn with each element of the array v until fn
// returns false, without decoding them, as ForEachMember does.
func ForEachElement(v gjson.Result, fn func(e gjson.Result) bool) {
	b := rawjson.Bytes(v.Raw)
	rawjson.Elements(b, rawjson.SkipSpace(b, 0), func(it rawjson.Item) bool {
		raw := v.Raw[it.Value:it.End]
		return fn(gjson.Result{Type: rawType(raw), Raw: raw, Index: v.Index + it.Value})
	})
}

// rawType is gjson's Type of a raw value.
func rawType(raw string) gjson.Type {
	if raw == "" {
		return gjson.Null
	}
	switch raw[0] {
	case '"':
		return gjson.String
	case '{', '[':
		return gjson.JSON
	case 't':
		return gjson.True
	case 'f':
		return gjson.False
	case 'n':
		return gjson.Null
	}
	return gjson.Number
}

// members calls fn with each member of the object b (raw key without
// quotes, raw value) until fn returns false. Like Lookup it trusts b to
// be valid JSON, as every line the index has validated is.
func members(b []byte, fn func(key, val []byte) bool) {
	rawjson.Members(b, rawjson.SkipSpace(b, 0), func(it rawjson.Item) bool { return fn(it.Key, b[it.Value:it.End]) })
}

// elements calls fn with each element of the array b, trusting b as
// members does.
func elements(b []byte, fn func(elem []byte)) {
	rawjson.Elements(b, rawjson.SkipSpace(b, 0), func(it rawjson.Item) bool { fn(b[it.Value:it.End]); return true })
}

// Members finds several members of the object json in one walk: out[i]
// is what Lookup(json, keys[i]) returns (the first member of that name),
// or an empty Result when json has none. The walk stops once every key
// is found, so keys that come early cost nothing of what follows them.
// json must be valid JSON, as Lookup requires; out must be as long as
// keys.
func Members(json string, keys []string, out []gjson.Result) {
	b := rawjson.Bytes(json)
	clear(out)
	left := len(keys)
	rawjson.Members(b, rawjson.SkipSpace(b, 0), func(it rawjson.Item) bool {
		for i, key := range keys {
			if out[i].Raw == "" && rawjson.KeyIs(it.Key, key) {
				raw := json[it.Value:it.End]
				out[i] = gjson.Result{Type: rawType(raw), Raw: raw, Index: it.Value}
				left--
				break
			}
		}
		return left > 0
	})
}

// LookupOpen is Lookup(json, key) for one key of the object json, except
// that an array or object value is not crossed to find its end: its Raw
// runs from its start to the end of json. That is enough for
// ForEachElement and ForEachMember, which stop at the value's closing
// bracket, and spares a crossing of a message's content before its
// blocks are crossed. Other values are returned as Lookup returns them.
func LookupOpen(json, key string) gjson.Result {
	b := rawjson.Bytes(json)
	var out gjson.Result
	open := func(k []byte, vs int) bool {
		if vs < len(b) && (b[vs] == '[' || b[vs] == '{') && rawjson.KeyIs(k, key) {
			out = gjson.Result{Type: gjson.JSON, Raw: json[vs:], Index: vs}
			return true
		}
		return false
	}
	rawjson.MembersUntil(b, rawjson.SkipSpace(b, 0), open, func(it rawjson.Item) bool {
		if rawjson.KeyIs(it.Key, key) {
			raw := json[it.Value:it.End]
			out = gjson.Result{Type: rawType(raw), Raw: raw, Index: it.Value}
			return false
		}
		return true
	})
	return out
}
