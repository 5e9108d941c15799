package transcript

import "bytes"

// CountEscapedNewlines counts the "\n" escapes in a raw JSON value, which
// is the number of line breaks in the text it encodes, without decoding it.
// It jumps from backslash to backslash with bytes.IndexByte: purge counts
// the lines of every value it stubs, 150 MB on the benchmark file, and a
// byte loop cost 0.13 s of it.
func CountEscapedNewlines(raw []byte) int {
	n := 0
	for i := 0; ; i += 2 { // past the backslash and the byte it escapes
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return n
		}
		i += j
		if i+1 >= len(raw) {
			return n
		}
		if raw[i+1] == 'n' {
			n++
		}
	}
}
