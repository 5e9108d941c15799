package main

import (
	"encoding/json"
	"io"
	"reflect"
)

// writeJSON writes v as the one JSON document of a command's --json
// output (docs/cli.md), indented. A list with nothing in it is written as
// [], never null: every nil slice v holds, however deep, is made empty
// first (which leaves v's meaning as it was).
func writeJSON(w io.Writer, v any) error {
	rv := reflect.ValueOf(v)
	if rv.IsValid() {
		c := reflect.New(rv.Type()).Elem() // addressable, so its fields can be set
		c.Set(rv)
		emptyLists(c, 0)
		v = c.Interface()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a resume line's && stays readable
	return enc.Encode(v)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// emptyLists replaces each nil slice under v by an empty one. Values that
// encode themselves (json.Marshaler) and byte slices (base64 strings) are
// left alone; depth bounds a walk that meets a cycle.
func emptyLists(v reflect.Value, depth int) {
	if depth > 64 || !v.IsValid() {
		return
	}
	if v.Type().Implements(marshalerType) || (v.CanAddr() && v.Addr().Type().Implements(marshalerType) && v.Kind() != reflect.Slice) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyLists(v.Elem(), depth+1)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			emptyLists(e, depth+1)
			return
		}
		if v.CanSet() {
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			emptyLists(c, depth+1)
			v.Set(c)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := v.Field(i); t.Field(i).IsExported() && f.CanSet() {
				emptyLists(f, depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			emptyLists(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			emptyLists(v.Index(i), depth+1)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(v.MapIndex(k))
			emptyLists(c, depth+1)
			v.SetMapIndex(k, c)
		}
	}
}
