package rawjson

import "unsafe"

// String views b as a string without copying, for gjson to read a line
// in place; b must not change while the string is in use.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Bytes views s as bytes without copying, for the scanners of this
// package to read a string gjson returned; they must not be written.
func Bytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
