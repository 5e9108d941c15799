package transcript

// CountEscapedNewlines counts the "\n" escapes in a raw JSON value, which
// is the number of line breaks in the text it encodes, without decoding it.
func CountEscapedNewlines(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			if raw[i+1] == 'n' {
				n++
			}
			i++
		}
	}
	return n
}
