// Mapped regions: this file gives read access to a range of a file as one byte
// slice: mapped into memory where the system can (no copy, and the page
// cache's pages are shared instead of touching fresh heap pages: for a
// hook that reads the megabyte after a transcript's last compact
// boundary, page faults on new buffers were a large part of its run), or
// read into one allocation of the range's size where it cannot.
//
// A mapped file that another process truncates makes reading the lost
// part fault; GuardMapped turns that fault into ErrShrunk instead of a crash.

package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// ErrShrunk is returned by GuardMapped when the mapped file was truncated while
// it was being read.
var ErrShrunk = errors.New("the file shrank while it was read")

// Region is a range of a file held in memory.
type Region struct {
	// Data is the range's bytes. It must not be written to, and nothing
	// that points into it may be used after Close.
	Data []byte
	// Off is the offset of Data[0] in the file.
	Off    int64
	unmap  func() error
	mapped bool
}

// Mapped reports whether Data is a memory mapping of the file (false:
// a copy read into memory).
func (r *Region) Mapped() bool { return r.mapped }

// Close releases the region. Data must not be used after it.
func (r *Region) Close() error {
	r.Data = nil
	if r.unmap == nil {
		return nil
	}
	u := r.unmap
	r.unmap = nil
	return u()
}

// MapRegion returns the n bytes of f from off. It maps them read-only where
// the system supports it and reads them otherwise (or when mapping
// fails: a file system that cannot map). Reading a mapping touches the
// file's pages as they are needed; run the reads under GuardMapped.
func MapRegion(f *os.File, off, n int64) (*Region, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("filemap: bad range %d+%d", off, n)
	}
	if n == 0 {
		return &Region{Off: off}, nil
	}
	if int64(int(n)) != n {
		return nil, fmt.Errorf("filemap: range of %d bytes too large", n)
	}
	if data, unmap, err := mapRange(f, off, n); err == nil {
		return &Region{Data: data, Off: off, unmap: unmap, mapped: true}, nil
	}
	data := make([]byte, n)
	if _, err := f.ReadAt(data, off); err != nil && !(errors.Is(err, io.EOF)) {
		return nil, err
	} else if err != nil {
		return nil, ErrShrunk
	}
	return &Region{Data: data, Off: off}, nil
}

// GuardMapped runs fn, which reads a Region, and returns ErrShrunk when a read
// faulted because the file was truncated meanwhile (a mapping past the
// file's end). Any other panic is passed on.
func GuardMapped(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); fault {
				err = ErrShrunk
				return
			}
			panic(r)
		}
	}()
	return fn()
}
