package transcript

import (
	"io"

	"github.com/tidwall/gjson"
)

// Sniff tells whether r is a transcript the way Build does, with the same
// errors (ErrNoObjects naming the first line that is not blank, or
// ErrUntyped), for a command that reads only part of a file and so never
// builds its index. It stops at the first record that names its type,
// the first line of any transcript; only a file that is not one is read
// to its end, a line at a time.
func Sniff(r io.Reader) error {
	rd := NewReader(r)
	objects := false
	firstBad, badKind, notObject := 0, Blank, false
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch l.Kind {
		case Object:
			objects = true
			if t := gjson.GetBytes(l.Body(), "type"); t.Type == gjson.String && t.Str != "" {
				return nil
			}
		case Blank:
		default:
			if firstBad == 0 {
				firstBad, badKind = l.Num, l.Kind
				notObject = l.Kind == Invalid && ValidJSON(l.Body())
			}
		}
	}
	switch {
	case objects:
		return ErrUntyped
	case firstBad > 0:
		return noObjects(firstBad, badKind, notObject)
	}
	// Nothing but blank lines, or nothing at all: Build reads no record
	// either, and the commands say the file is empty or has no record.
	return nil
}
