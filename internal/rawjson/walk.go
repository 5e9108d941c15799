// Walking members: this file is ccm's one walker over the members of a
// JSON object and the elements of an array in raw bytes. It finds each
// key and where each value starts and ends, crossing values with
// ValueEnd (quote to quote), so a walk over a record with megabytes of tool
// output costs a few memchr calls and decodes nothing. The transcript
// engine's lookups, the capture hook's reading of its event and install's
// byte-exact settings.json editor all walk through it.
//
// Input is trusted to be JSON (validated before, as every transcript line
// the index has read and every hook event is): the walker checks only the
// structure it crosses, so that on anything else it stops early, never
// reads out of bounds and never panics. Checking a line is the validator's
// job (transcript's), which walks and validates in one pass.

package rawjson

import "bytes"

// Item is one member of an object or one element of an array, as Members
// and Elements find it: offsets into the walked bytes.
type Item struct {
	// Key is the member's key as written between its quotes, escapes
	// not decoded (KeyIs compares it); nil for an array element.
	Key []byte
	// Start is the offset of the key's opening quote; for an array
	// element, of the value's first byte.
	Start int
	// Value is the offset of the value's first byte.
	Value int
	// End is one past the value's last byte.
	End int
}

// Members calls fn with each member of the object whose '{' is at b[i],
// in order, until fn returns false. It returns the offset of the object's
// closing '}', or -1 when fn stopped the walk, no object starts at b[i],
// or the object is cut short or not well formed (the walk then stops at
// the first byte it cannot read).
func Members(b []byte, i int, fn func(Item) bool) int {
	return MembersUntil(b, i, nil, fn)
}

// MembersUntil is Members with open, when not nil, asked about each member
// before its value is crossed, with the member's key and the offset of its
// value: when open returns true the walk ends there (returning -1) and the
// value is never crossed, for a caller that needs only where a large value
// starts.
func MembersUntil(b []byte, i int, open func(key []byte, value int) bool, fn func(Item) bool) int {
	if i < 0 || i >= len(b) || b[i] != '{' {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i
	}
	for i < len(b) && b[i] == '"' {
		ke := StringEnd(b, i+1)
		if ke < 0 {
			return -1
		}
		it := Item{Key: b[i+1 : ke-1], Start: i}
		i = SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		it.Value = SkipSpace(b, i+1)
		if open != nil && open(it.Key, it.Value) {
			return -1
		}
		if it.End = ValueEnd(b, it.Value); it.End < 0 || !fn(it) {
			return -1
		}
		var more bool
		if i, more = next(b, it.End, '}'); !more {
			return i
		}
	}
	return -1
}

// Elements calls fn with each element of the array whose '[' is at b[i],
// in order, until fn returns false. It returns the offset of the closing
// ']', or -1 as Members does.
func Elements(b []byte, i int, fn func(Item) bool) int {
	if i < 0 || i >= len(b) || b[i] != '[' {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i
	}
	for i < len(b) {
		it := Item{Start: i, Value: i, End: ValueEnd(b, i)}
		if it.End < 0 || !fn(it) {
			return -1
		}
		var more bool
		if i, more = next(b, it.End, ']'); !more {
			return i
		}
	}
	return -1
}

// next reads what follows a value that ends at b[end] inside a container
// that close ends: with more, i is the next item, past the comma and the
// white space after it; without, i is close's offset, or -1 when neither a
// comma nor close follows.
func next(b []byte, end int, close byte) (i int, more bool) {
	i = SkipSpace(b, end)
	switch {
	case i >= len(b):
		return -1, false
	case b[i] == ',':
		return SkipSpace(b, i+1), true
	case b[i] == close:
		return i, false
	}
	return -1, false
}

// Member finds the first member named key of the object whose '{' is at
// b[i].
func Member(b []byte, i int, key string) (Item, bool) {
	var found Item
	ok := false
	Members(b, i, func(it Item) bool {
		if KeyIs(it.Key, key) {
			found, ok = it, true
			return false
		}
		return true
	})
	return found, ok
}

// KeyIs reports whether the raw key k (as written between its quotes) is
// key once its escapes are decoded. A key without a backslash, the usual
// case, is compared as it is, with no copy.
func KeyIs(k []byte, key string) bool {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k) == key
	}
	s, ok := Unquote(`"` + string(k) + `"`)
	return ok && string(s) == key
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON white space (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}
