// Package rawjson reads and edits JSON in its raw bytes, without decoding
// what it does not need: it finds where a value or a string ends, walks
// the members of an object and the elements of an array, writes
// strings as Claude Code writes them, and splices new values into a line
// at the offsets gjson reports, leaving every other byte as it was. It is
// the one place ccm handles JSON below gjson and sjson; it imports nothing
// of ccm.
package rawjson
