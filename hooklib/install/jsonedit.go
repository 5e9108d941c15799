package install

import (
	"fmt"
	"strings"

	"ccm/internal/rawjson"
)

// Byte-level editing of a JSON document that is known to be valid. sjson
// can set and delete values, but it writes a new key right after the
// previous value on the same line, so a pretty settings.json would come
// back in a mixed style, and deleting what it inserted would not give the
// original bytes back. These helpers insert an element or member with the
// whitespace its neighbours use and delete exactly the bytes an insertion
// added, so install followed by uninstall is the identity. Nothing outside
// the edited range is ever rewritten.

// item is one member of an object or element of an array.
type item struct {
	key      string // object members only (unescaped only for plain keys)
	start    int    // first byte: the key's quote, or the value
	valStart int
	end      int // one past the value
	wsBefore string
}

// container is an object or array found in a document.
type container struct {
	open, close int // offsets of the brackets
	items       []item
}

// parseContainer lists the items of the object or array opening at
// d[open], with the whitespace in front of each (after the comma that
// precedes it, or after the opening bracket for the first).
func parseContainer(d []byte, open int) container {
	c := container{open: open}
	prev := open // where the separator before the next item ends
	add := func(it rawjson.Item) bool {
		if len(c.items) > 0 {
			prev = rawjson.SkipSpace(d, c.items[len(c.items)-1].end) // the comma
		}
		c.items = append(c.items, item{key: string(it.Key), start: it.Start, valStart: it.Value, end: it.End,
			wsBefore: string(d[prev+1 : it.Start])})
		return true
	}
	if d[open] == '{' {
		c.close = rawjson.Members(d, open, add)
	} else {
		c.close = rawjson.Elements(d, open, add)
	}
	return c
}

// find returns the container at path (object keys; plain keys only) from
// the top-level object, or false.
func find(d []byte, path ...string) (container, bool) {
	c := parseContainer(d, rawjson.SkipSpace(d, 0))
	for _, key := range path {
		found := false
		for _, it := range c.items {
			if it.key == key && (d[it.valStart] == '{' || d[it.valStart] == '[') {
				c, found = parseContainer(d, it.valStart), true
				break
			}
		}
		if !found {
			return container{}, false
		}
	}
	return c, true
}

// member returns the item of an object with the given key.
func (c container) member(key string) (item, bool) {
	for _, it := range c.items {
		if it.key == key {
			return it, true
		}
	}
	return item{}, false
}

// style is the whitespace convention of the document.
type style struct {
	pretty bool
	unit   string // one level of indentation
	nl     string // "\n" or "\r\n"
}

// detectStyle looks at the first member of the top-level object.
func detectStyle(d []byte) style {
	s := style{unit: "  ", nl: "\n"}
	c := parseContainer(d, rawjson.SkipSpace(d, 0))
	ws := ""
	if len(c.items) > 0 {
		ws = c.items[0].wsBefore
	} else {
		ws = string(d[c.open+1 : c.close])
	}
	if k := strings.LastIndexByte(ws, '\n'); k >= 0 {
		s.pretty = true
		if k > 0 && ws[k-1] == '\r' {
			s.nl = "\r\n"
		}
		if u := ws[k+1:]; u != "" {
			s.unit = u
		}
	} else if len(c.items) == 0 {
		s.pretty = true // "{}": a new file gets a readable layout
	}
	return s
}

// indentOf returns the indentation of the line holding offset i.
func indentOf(d []byte, i int) string {
	ls := i
	for ls > 0 && d[ls-1] != '\n' {
		ls--
	}
	e := ls
	for e < len(d) && (d[e] == ' ' || d[e] == '\t') {
		e++
	}
	return string(d[ls:e])
}

// appendItem adds raw (a member `"key": value` for objects, a value for
// arrays) as the last item of c. raw is laid out by the caller with the
// indentation returned by childIndent. Into an empty container of a pretty
// document the item goes on its own line; whitespace already inside an
// empty container is kept in front of it. removeItem undoes exactly this.
func appendItem(d []byte, c container, raw string, st style) []byte {
	if n := len(c.items); n > 0 {
		at := c.items[n-1].end
		return splice(d, at, at, ","+c.items[n-1].wsBefore+raw)
	}
	if st.pretty && c.close == c.open+1 {
		raw = st.nl + indentOf(d, c.open) + st.unit + raw + st.nl + indentOf(d, c.open)
	}
	return splice(d, c.close, c.close, raw)
}

// childIndent is the indentation new items of c get.
func childIndent(d []byte, c container, st style) string {
	if !st.pretty {
		return ""
	}
	if len(c.items) > 0 {
		ws := c.items[len(c.items)-1].wsBefore
		if k := strings.LastIndexByte(ws, '\n'); k >= 0 {
			return ws[k+1:]
		}
	}
	return indentOf(d, c.open) + st.unit
}

// removeItem deletes item k of c with the separator that joined it to its
// neighbour: the exact inverse of appendItem.
func removeItem(d []byte, c container, k int) []byte {
	switch {
	case k > 0:
		return splice(d, c.items[k-1].end, c.items[k].end, "")
	case len(c.items) > 1:
		return splice(d, c.items[0].start, c.items[1].start, "")
	case c.items[0].end == c.close:
		// Nothing after it: it was put after whatever was inside.
		return splice(d, c.items[0].start, c.items[0].end, "")
	default:
		return splice(d, c.open+1, c.close, "")
	}
}

func splice(d []byte, from, to int, ins string) []byte {
	out := make([]byte, 0, len(d)-(to-from)+len(ins))
	out = append(out, d[:from]...)
	out = append(out, ins...)
	return append(out, d[to:]...)
}

// quote returns s as a JSON string (the keys and commands ccm writes are
// plain ASCII, but a binary path may need escapes).
func quote(s string) string { return string(rawjson.Append(nil, s)) }

// kv and obj describe the small JSON values ccm writes, in key order.
type kv struct {
	k string
	v any
}
type obj []kv

// render lays out v (string, int, []any or obj) in the document's style;
// indent is the indentation of the line v starts on.
func render(v any, indent string, st style) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case int:
		return fmt.Sprint(v)
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, render(e, indent+st.unit, st))
		}
		return "[" + nlIndent(st, indent+st.unit) + strings.Join(parts, ","+nlIndent(st, indent+st.unit)) + nlIndent(st, indent) + "]"
	case obj:
		var parts []string
		for _, m := range v {
			parts = append(parts, quote(m.k)+colon(st)+render(m.v, indent+st.unit, st))
		}
		return "{" + nlIndent(st, indent+st.unit) + strings.Join(parts, ","+nlIndent(st, indent+st.unit)) + nlIndent(st, indent) + "}"
	}
	panic(fmt.Sprintf("render: unexpected %T", v))
}

// nlIndent is a line break plus indent in pretty style, nothing otherwise.
func nlIndent(st style, indent string) string {
	if !st.pretty {
		return ""
	}
	return st.nl + indent
}

func colon(st style) string {
	if st.pretty {
		return ": "
	}
	return ":"
}
