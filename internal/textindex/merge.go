package textindex

import (
	"encoding/binary"
	"io"
)

// Merge writes one segment holding the documents of segs that keep
// accepts, in order (segs[0]'s first), with their words. It reads each
// segment's dictionary and postings once, in key order. It returns the
// number of documents and of bytes written.
func Merge(w io.Writer, segs []*Segment, keep func(d Doc) bool) (int, int64, error) {
	var all []Doc
	var text int64
	remap := make([][]int32, len(segs))
	for i, s := range segs {
		remap[i] = make([]int32, s.f.docs)
		kept := 0
		err := s.AllDocs(func(j uint32, d Doc) bool {
			if keep(d) {
				remap[i][j] = int32(len(all))
				all = append(all, d)
				kept++
			} else {
				remap[i][j] = -1
			}
			return true
		})
		if err != nil {
			return 0, 0, err
		}
		if s.f.docs > 0 {
			text += int64(float64(s.f.textBytes) * float64(kept) / float64(s.f.docs))
		}
	}
	if len(all) > MaxDocs {
		return 0, 0, ErrFull
	}
	its := make([]*dictIter, len(segs))
	for i, s := range segs {
		it, err := s.iter()
		if err != nil {
			return 0, 0, err
		}
		its[i] = it
	}
	sw := newSegWriter(w)
	var out []uint32
	var buf []byte
	for {
		var key uint64
		found := false
		for _, it := range its {
			if it.ok && (!found || it.key < key) {
				key, found = it.key, true
			}
		}
		if !found {
			break
		}
		out = out[:0]
		for i, it := range its {
			if !it.ok || it.key != key {
				continue
			}
			if cap(buf) < int(it.n) {
				buf = make([]byte, it.n)
			}
			b := buf[:it.n]
			if _, err := segs[i].r.ReadAt(b, int64(it.off)); err != nil {
				return 0, 0, err
			}
			var doc uint64
			for len(b) > 0 {
				d, m := binary.Uvarint(b)
				if m <= 0 {
					return 0, 0, corrupt("postings varint")
				}
				b = b[m:]
				doc += d
				if doc >= uint64(len(remap[i])) {
					return 0, 0, corrupt("posting past the last document")
				}
				if nd := remap[i][doc]; nd >= 0 {
					out = append(out, uint32(nd))
				}
			}
			if err := it.next(); err != nil {
				return 0, 0, err
			}
		}
		sw.key(key, out)
	}
	size, err := sw.finish(all, text)
	if err != nil {
		return 0, 0, err
	}
	return len(all), size, nil
}

// dictIter walks a segment's dictionary in key order.
type dictIter struct {
	s       *Segment
	all     []byte // the whole dictionary
	dict    []byte // what is left of the current block
	block   uint64
	inBlock int
	key     uint64
	off, n  uint64 // the key's postings
	ok      bool
}

func (s *Segment) iter() (*dictIter, error) {
	it := &dictIter{s: s, all: make([]byte, s.f.blockOff-s.f.dictOff)}
	if _, err := s.r.ReadAt(it.all, int64(s.f.dictOff)); err != nil {
		return nil, err
	}
	it.block = ^uint64(0)
	return it, it.next()
}

func (it *dictIter) next() error {
	s := it.s
	nb := s.f.blocks
	if it.block == ^uint64(0) || it.inBlock == blockTerms {
		it.block++
		it.inBlock = 0
		if it.block >= nb {
			it.ok = false
			return nil
		}
		it.key = s.blocks[3*it.block]
		it.off = 8 + s.blocks[3*it.block+2]
		it.n = 0
		pos := s.blocks[3*it.block+1]
		end := uint64(len(it.all))
		if it.block+1 < nb {
			end = s.blocks[3*it.block+4]
		}
		if pos > end || end > uint64(len(it.all)) {
			return corrupt("dictionary block offset")
		}
		it.dict = it.all[pos:end]
		d, m1 := binary.Uvarint(it.dict)
		l, m2 := binary.Uvarint(it.dict[max(m1, 0):])
		if m1 <= 0 || m2 <= 0 || d != 0 {
			return corrupt("dictionary varint")
		}
		it.dict = it.dict[m1+m2:]
		it.n = l
		it.inBlock = 1
		it.ok = true
		return it.check()
	}
	if len(it.dict) == 0 {
		if it.inBlock < blockTerms && it.block+1 < nb {
			return corrupt("short dictionary block")
		}
		it.inBlock = blockTerms
		return it.next()
	}
	d, m1 := binary.Uvarint(it.dict)
	if m1 <= 0 {
		return corrupt("dictionary varint")
	}
	l, m2 := binary.Uvarint(it.dict[m1:])
	if m2 <= 0 || d == 0 {
		return corrupt("dictionary varint")
	}
	it.dict = it.dict[m1+m2:]
	it.key += d
	it.off += it.n
	it.n = l
	it.inBlock++
	return it.check()
}

func (it *dictIter) check() error {
	if it.off+it.n > it.s.f.dictOff {
		return corrupt("postings out of bounds")
	}
	return nil
}
