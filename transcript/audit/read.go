package audit

import (
	"errors"
	"io"
	"os"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// TailLimit bounds how many new bytes one incremental read takes: past
// it, the audit starts over from that far before the end and is marked
// partial.
const TailLimit = 32 << 20

// Update reads what was appended to the transcript since a.Offset. A file
// that shrank (a purge rewrote it) is read again from its last compact
// boundary. With whole, no TailLimit applies (ccm audit).
//
// Without whole (the Stop hook) the bytes to read, at most TailLimit, are
// mapped into memory (filemap): the boundary is found from their end and
// the records after it are read from the same bytes, with no buffer of
// its own. With whole they are streamed: the file may be any size.
func (a *Audit) Update(f *os.File, whole bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New(f.Name() + " is not a regular file")
	}
	size := fi.Size()
	restart := size < a.Offset || !a.Started
	if restart {
		*a = Audit{Consumers: map[string]*Consumer{}, Pending: map[string]string{}, Path: a.Path}
		a.Started = true
	}
	if whole {
		if restart {
			// New or rewritten: start at the last boundary.
			tf, err := transcript.ReadTail(f, size, 0, true)
			if err != nil {
				return err
			}
			a.Offset = max(tf.Boundary, 0)
		}
		return a.read(transcript.NewReader(io.NewSectionReader(f, a.Offset, size-a.Offset)))
	}
	from := a.Offset
	if restart {
		from = 0
	}
	from = max(from, size-TailLimit)
	rg, err := fsutil.MapRegion(f, from, size-from)
	if err != nil {
		return err
	}
	defer rg.Close()
	return fsutil.GuardMapped(func() error {
		if restart {
			// New or rewritten: start at the last boundary.
			tf := transcript.ReadTailBytes(rg.Data, from, true)
			switch {
			case tf.Boundary >= 0:
				a.Offset = tf.Boundary
			case size > TailLimit:
				a.Offset, a.Partial = size-TailLimit, true
			}
		}
		if size-a.Offset > TailLimit {
			a.Reset()
			a.Offset, a.Partial = size-TailLimit, true
		}
		rd := transcript.NewReaderBytes(rg.Data[a.Offset-from:])
		rd.Structural = true // four times as fast; still refuses torn lines
		return a.read(rd)
	})
}

// read adds the records of rd, which starts at a.Offset, and moves
// a.Offset past the last complete line.
func (a *Audit) read(rd *transcript.Reader) error {
	end := a.Offset
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
