package capture

import (
	"ccm/internal/rawjson"
)

// Member returns the raw JSON value of key in the JSON object raw, and its
// offset in raw. raw must be valid JSON (hook input is validated when it is
// read). Unlike a gjson lookup it neither decodes nor walks the strings it
// passes byte by byte: rawjson's walker jumps from quote to quote, so
// finding a member after a 16 MB output costs a memchr, not a decode.
func Member(raw, key string) (val string, off int, ok bool) {
	b := rawjson.Bytes(raw)
	it, ok := rawjson.Member(b, rawjson.SkipSpace(b, 0), key)
	if !ok {
		return "", 0, false
	}
	return raw[it.Value:it.End], it.Value, true
}
