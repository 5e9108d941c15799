// Pack index parsing: this file decodes the pack index's log lines into
// operations (parseOp), split into parts parsed on every core (replay).

package ccm

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"
)

// parsedLine is one log line, decoded.
type parsedLine struct {
	op    indexOp
	err   error
	blank bool
}

func parseLines(b []byte) []parsedLine {
	out := make([]parsedLine, 0, bytes.Count(b, []byte{'\n'}))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b[:i]
		b = b[i+1:]
		var pl parsedLine
		if len(line) == 0 {
			pl.blank = true
		} else {
			pl.err = parseOp(line, &pl.op)
		}
		out = append(out, pl)
	}
	return out
}

// splitLines cuts b (whole lines) into at most n parts of whole lines, one
// part when b is shorter than min.
func splitLines(b []byte, n, min int) [][]byte {
	if n <= 1 || len(b) < min {
		return [][]byte{b}
	}
	var out [][]byte
	for n > 1 && len(b) > 0 {
		cut := len(b) / n
		j := bytes.IndexByte(b[cut:], '\n')
		if j < 0 {
			break
		}
		out = append(out, b[:cut+j+1])
		b = b[cut+j+1:]
		n--
	}
	if len(b) > 0 {
		out = append(out, b)
	}
	return out
}

// indexOp is one decoded log line.
type indexOp struct {
	op     string
	key    Key
	t      time.Time
	loc    packLoc
	size   int64
	lines  int64
	access time.Time // put lines of a snapshot
	count  int64
	pin    PinInfo
	hasPin bool
	src    Source
	why    string
}

func nsTime(v gjson.Result) time.Time {
	if v.Int() == 0 {
		return time.Time{}
	}
	return time.Unix(0, v.Int())
}

// parseOp decodes one log line.
func parseOp(line []byte, op *indexOp) error {
	if !gjson.ValidBytes(line) {
		return errors.New("not JSON (a torn write?)")
	}
	var err error
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "op":
			op.op = v.Str
		case "key":
			op.key, err = ParseKey(v.Str)
		case "t":
			op.t = nsTime(v)
		case "pack":
			op.loc.pack = v.Str
			if !validPackID(v.Str) {
				err = fmt.Errorf("invalid pack id %s", quoteShort(v.Str))
			}
		case "off":
			op.loc.off = v.Int()
		case "len":
			op.loc.clen = v.Int()
		case "codec":
			op.loc.codec = Compression(v.Str)
		case "crc":
			op.loc.crc = uint32(v.Uint())
		case "size":
			op.size = v.Int()
		case "lines":
			op.lines = v.Int()
		case "access":
			op.access = nsTime(v)
		case "count":
			op.count = v.Int()
		case "pin":
			op.hasPin = true
			op.pin.Level, err = ParsePinLevel(v.Str)
		case "reason":
			op.pin.Reason = v.Str
		case "pinned_at":
			op.pin.PinnedAt = nsTime(v)
		case "source":
			err = op.src.set(v)
		case "why":
			op.why = v.Str
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if op.key == "" {
		return errors.New("no key")
	}
	return nil
}
