package stub

import (
	"bytes"

	"ccm/ccm"
	"ccm/internal/rawjson"
)

// Limits of KeyScanner: a stub block is a few hundred bytes (its source
// line is cut short), so a start marker without an end marker within
// blockMax bytes starts no stub; a v3 "Retrieve:" line follows the end
// marker within afterMax bytes.
const (
	blockMax = 64 << 10
	afterMax = 512
)

var (
	startMarker = []byte(Start)
	endMarker   = []byte(End)
)

// KeyScanner is an io.Writer that finds the keys of the stubs in the raw
// bytes of transcripts written through it: JSON lines, where a stub sits
// inside a JSON string with its line breaks written as \n (or deeper,
// \\n, when that string holds JSON in turn). It reads what Find reads (v1,
// v2 and v3 stubs) without parsing the JSON around them, and holds at most
// one block between writes, so its memory does not grow with the lines.
// Call Flush at the end of the stream.
type KeyScanner struct {
	Keys  map[ccm.Key]struct{}
	carry []byte
}

// Write scans p; it never fails.
func (k *KeyScanner) Write(p []byte) (int, error) {
	if n := len(k.carry); n > 0 && n < len(startMarker) && len(p) >= len(startMarker)-1 {
		// The carry is only bytes that may begin a marker: p is scanned in
		// place (not copied) unless a marker does straddle the writes.
		var joined [2 * len(Start)]byte
		straddle := append(append(joined[:0], k.carry...), p[:len(startMarker)-1]...)
		if !bytes.Contains(straddle, startMarker) {
			k.carry = k.carry[:0]
		}
	}
	if len(k.carry) == 0 {
		k.keep(k.scan(p, false))
		return len(p), nil
	}
	k.carry = append(k.carry, p...)
	k.keep(k.scan(k.carry, false))
	return len(p), nil
}

// Flush reads a block left waiting for the bytes after it.
func (k *KeyScanner) Flush() {
	if len(k.carry) > 0 {
		k.scan(k.carry, true)
		k.carry = k.carry[:0]
	}
}

// keep makes rest, a suffix of the data just scanned, the next carry.
func (k *KeyScanner) keep(rest []byte) {
	k.carry = append(k.carry[:0], rest...)
}

// scan reads every complete block in data and returns the suffix to carry:
// an unfinished block, or the bytes that may begin a marker.
func (k *KeyScanner) scan(data []byte, final bool) []byte {
	i := 0
	for {
		j := bytes.Index(data[i:], startMarker)
		if j < 0 {
			break
		}
		s := i + j
		body := s + len(startMarker)
		e := bytes.Index(data[body:min(len(data), s+blockMax)], endMarker)
		if e < 0 {
			if !final && len(data)-s < blockMax {
				return data[s:] // its end marker may come
			}
			i = body // no end nearby: not a stub
			continue
		}
		end := body + e + len(endMarker)
		if !final && len(data)-end < afterMax && !bytes.Contains(data[body:end], []byte("key:")) {
			return data[s:] // a v3 key may follow the block
		}
		k.block(data[s:min(len(data), end+afterMax)])
		i = end
	}
	if final {
		return nil
	}
	return data[max(i, len(data)-(len(startMarker)-1)):]
}

// block adds the keys of the stub that raw (raw JSON string bytes from a
// start marker on) begins with.
func (k *KeyScanner) block(raw []byte) {
	text := raw
	for depth := 0; depth < 4; depth++ {
		ms := Find(string(text))
		if len(ms) > 0 {
			if k.Keys == nil {
				k.Keys = map[ccm.Key]struct{}{}
			}
			for _, m := range ms {
				k.Keys[m.Stub.Key] = struct{}{}
			}
			return
		}
		if !bytes.Contains(text, []byte(`\n`)) {
			return
		}
		var ok bool
		if text, ok = unescape(text); !ok {
			return
		}
	}
}

// unescape decodes one level of JSON string escapes in b, a piece of a
// JSON string's raw bytes that may end inside an escape (the piece is cut
// there) or go on past the string's closing quote (it is cut there). ok is
// false when the piece is not escaped JSON text.
func unescape(b []byte) ([]byte, bool) {
	end := len(b)
scan:
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			n := 2
			if i+1 < len(b) && b[i+1] == 'u' {
				n = 6
			}
			if i+n > len(b) {
				end = i
				break scan
			}
			i += n - 1
		case '"':
			end = i
			break scan
		}
	}
	return rawjson.Unquote(`"` + string(b[:end]) + `"`)
}
