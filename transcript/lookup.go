package transcript

import (
	"bytes"
	"strings"
	"unsafe"

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
	b := unsafe.Slice(unsafe.StringData(json), len(json))
	start, end := 0, len(b)
	for _, key := range strings.Split(path, ".") {
		vs, ve, ok := member(b[:end], skipWS(b[:end], start), key)
		if !ok {
			return gjson.Result{}
		}
		start, end = vs, ve
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
	b := unsafe.Slice(unsafe.StringData(v.Raw), len(v.Raw))
	membersAt(b, skipWS(b, 0), func(k []byte, vs, ve int) bool {
		key := string(k)
		if bytes.IndexByte(k, '\\') >= 0 {
			key = str(append(append([]byte{'"'}, k...), '"'))
		}
		raw := v.Raw[vs:ve]
		return fn(key, gjson.Result{Type: rawType(raw), Raw: raw, Index: v.Index + vs})
	})
}

// ForEachElement calls fn with each element of the array v until fn
// returns false, without decoding them, as ForEachMember does.
func ForEachElement(v gjson.Result, fn func(e gjson.Result) bool) {
	b := unsafe.Slice(unsafe.StringData(v.Raw), len(v.Raw))
	elementsAt(b, func(vs, ve int) bool {
		raw := v.Raw[vs:ve]
		return fn(gjson.Result{Type: rawType(raw), Raw: raw, Index: v.Index + vs})
	})
}

// member finds key in the object that starts at i and returns its value's
// span.
func member(b []byte, i int, key string) (vs, ve int, found bool) {
	membersAt(b, i, func(k []byte, s, e int) bool {
		if keyIs(k, key) {
			vs, ve, found = s, e, true
			return false
		}
		return true
	})
	return vs, ve, found
}

// membersAt calls fn with each member of the object that starts at b[i]:
// its raw key (without quotes) and its value's span, until fn returns
// false or the structure ends. Values are crossed with rawjson.ValueEnd.
func membersAt(b []byte, i int, fn func(key []byte, vs, ve int) bool) {
	membersFrom(b, i, nil, fn)
}

// membersFrom is membersAt with open, when not nil, asked first about each
// member, before its value is crossed: when it returns true the walk ends
// there, and the value is never crossed (MembersOpen).
func membersFrom(b []byte, i int, open func(key []byte, vs int) bool, fn func(key []byte, vs, ve int) bool) {
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := rawjson.StringEnd(b, i+1)
		if ke < 0 {
			return
		}
		k := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		vs := skipWS(b, i+1)
		if open != nil && open(k, vs) {
			return
		}
		ve := rawjson.ValueEnd(b, vs)
		if ve < 0 || !fn(k, vs, ve) {
			return
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

// keyIs compares a raw key (without quotes) with a plain key.
func keyIs(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	return str(append(append([]byte{'"'}, raw...), '"')) == key
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
// be valid JSON, as every line the index has validated is: values are
// crossed with rawjson.ValueEnd, never validated again, so that a walk over a
// record with megabytes of output costs a few quote searches.
func members(b []byte, fn func(key, val []byte) bool) {
	membersAt(b, skipWS(b, 0), func(k []byte, vs, ve int) bool { return fn(k, b[vs:ve]) })
}

// elements calls fn with each element of the array b, trusting b as
// members does.
func elements(b []byte, fn func(elem []byte)) {
	elementsAt(b, func(vs, ve int) bool { fn(b[vs:ve]); return true })
}

// elementsAt calls fn with the span of each element of the array b until
// fn returns false.
func elementsAt(b []byte, fn func(vs, ve int) bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != ']' {
		ve := rawjson.ValueEnd(b, i)
		if ve < 0 || !fn(i, ve) {
			return
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

// Members finds several members of the object json in one walk: out[i]
// is what Lookup(json, keys[i]) returns (the first member of that name),
// or an empty Result when json has none. The walk stops once every key
// is found, so keys that come early cost nothing of what follows them.
// json must be valid JSON, as Lookup requires; out must be as long as
// keys.
func Members(json string, keys []string, out []gjson.Result) {
	b := unsafe.Slice(unsafe.StringData(json), len(json))
	clear(out)
	left := len(keys)
	membersAt(b, skipWS(b, 0), func(k []byte, vs, ve int) bool {
		for i, key := range keys {
			if out[i].Raw == "" && keyIs(k, key) {
				raw := json[vs:ve]
				out[i] = gjson.Result{Type: rawType(raw), Raw: raw, Index: vs}
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
	b := unsafe.Slice(unsafe.StringData(json), len(json))
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return gjson.Result{}
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := rawjson.StringEnd(b, i+1)
		if ke < 0 {
			return gjson.Result{}
		}
		k := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return gjson.Result{}
		}
		vs := skipWS(b, i+1)
		if keyIs(k, key) && vs < len(b) && (b[vs] == '[' || b[vs] == '{') {
			return gjson.Result{Type: gjson.JSON, Raw: json[vs:], Index: vs}
		}
		ve := rawjson.ValueEnd(b, vs)
		if ve < 0 {
			return gjson.Result{}
		}
		if keyIs(k, key) {
			raw := json[vs:ve]
			return gjson.Result{Type: rawType(raw), Raw: raw, Index: vs}
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return gjson.Result{}
		}
		i = skipWS(b, i+1)
	}
	return gjson.Result{}
}
