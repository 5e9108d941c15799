package audit

import (
	"errors"
	"io"
	"os"

	"ccm/transcript"
)

// TailLimit bounds how many new bytes one incremental read takes: past
// it, the audit starts over from that far before the end and is marked
// partial.
const TailLimit = 32 << 20

// Update reads what was appended to the transcript since a.Offset. A file
// that shrank (a purge rewrote it) is read again from its last compact
// boundary. With whole, no TailLimit applies (ccm audit).
func (a *Audit) Update(f *os.File, whole bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New(f.Name() + " is not a regular file")
	}
	size := fi.Size()
	if size < a.Offset || !a.Started {
		// New or rewritten: start at the last boundary.
		*a = Audit{Consumers: map[string]*Consumer{}, Pending: map[string]string{}, Path: a.Path}
		a.Started = true
		limit := int64(TailLimit)
		if whole {
			limit = 0
		}
		tf, err := transcript.ReadTail(f, size, limit, true)
		if err != nil && !errors.Is(err, transcript.ErrTailLimit) {
			return err
		}
		switch {
		case tf.Boundary >= 0:
			a.Offset = tf.Boundary
		case !whole && size > TailLimit:
			a.Offset, a.Partial = size-TailLimit, true
		}
	}
	if !whole && size-a.Offset > TailLimit {
		a.Reset()
		a.Offset, a.Partial = size-TailLimit, true
	}
	rd := transcript.NewReader(io.NewSectionReader(f, a.Offset, size-a.Offset))
	var end int64 = a.Offset
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !l.Terminated {
			break // a record still being written: read it next time
		}
		end = a.Offset + l.Offset + int64(len(l.Raw))
		if l.Kind == transcript.Object {
			a.Add(transcript.NewRecord(l.Body()))
		}
	}
	a.Offset = end
	return nil
}
