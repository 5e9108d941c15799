package transcript

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Lookup finds the value at path (object keys joined by '.') in json
// without decoding it: the result has Type, Raw and Index as gjson.Get
// sets them, but Str and Num stay empty. gjson.Get decodes a string result
// in full, so asking where a 10 MB tool output sits cost a 10 MB unescape
// and copy; purge asks that of every large value it stubs, and the copies
// took a third of its CPU. Lookup skips values with the validator instead.
//
// json must be a record the index validated; where it is not valid JSON
// or path names no value, Lookup reports a result that does not Exist.
func Lookup(json, path string) gjson.Result {
	b := unsafe.Slice(unsafe.StringData(json), len(json))
	start, end := 0, len(b)
	for _, key := range strings.Split(path, ".") {
		vs, ve, ok := member(b[:end], skipWS(b, start), key)
		if !ok {
			return gjson.Result{}
		}
		start, end = vs, ve
	}
	raw := json[start:end]
	return gjson.Result{Type: rawType(raw), Raw: raw, Index: start}
}

// member finds key in the object that starts at i and returns its value's
// span.
func member(b []byte, i int, key string) (vs, ve int, found bool) {
	w := &walker{b: b}
	w.object(i, func(k []byte, s int) int {
		e := w.value(s)
		if !found && keyIs(k, key) {
			vs, ve, found = s, e, true
		}
		return e
	})
	return vs, ve, found && !w.bad
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
