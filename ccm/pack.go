package ccm

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/klauspost/compress/s2"

	"ccm/internal/fsutil"
)

// S2 is the codec of pack frames: an S2 block (klauspost/compress/s2).
// Measured on the blobs of a purge of the 200 MB bench file
// (scripts/codecbench), it compresses 1.9 times faster than zstd's fastest
// level for 1.34 times its size, within the store's rule of at most 1.4.
const S2 Compression = "s2"

// packMagic starts every pack file, so a pack is recognised as one.
var packMagic = []byte("CCMPACK\x01")

// maxMemFrame is the largest frame read whole into memory (to check its
// CRC before decoding); larger frames (zstd streams of big content) are
// decoded as they stream and checked by their hash alone.
const maxMemFrame = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func frameCRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// encodeFrame compresses content for a pack: raw under 1 KiB or when
// compression does not shrink it, else in codec c (S2, or zstd for content
// over inMemoryLimit and when $CCM_COMPRESSION asks for it). The frame is
// valid until release is called.
func encodeFrame(content []byte, c Compression) (Compression, []byte, func()) {
	n := len(content)
	none := func() {}
	if n < minCompressSize || c == None {
		return None, content, none
	}
	if c == S2 && n <= inMemoryLimit {
		bp := s2Bufs.Get().(*[]byte)
		if need := s2.MaxEncodedLen(n); cap(*bp) < need {
			*bp = make([]byte, need)
		}
		out := s2.Encode((*bp)[:cap(*bp)], content)
		if len(out) >= n {
			putS2Buf(bp)
			return None, content, none
		}
		return S2, out, func() { putS2Buf(bp) }
	}
	if n <= inMemoryLimit {
		enc := encodeAll(content)
		if len(enc) >= n {
			releaseEncoded(enc)
			return None, content, none
		}
		return Zstd, enc, func() { releaseEncoded(enc) }
	}
	var buf bytes.Buffer
	if _, err := compressTo(&buf, bytes.NewReader(content), int64(n), Zstd); err != nil {
		return None, content, none // errNoShrink: store it raw
	}
	return Zstd, buf.Bytes(), none
}

var s2Bufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledS2 is the largest encode buffer kept for reuse: a pool of
// buffers for 4 MiB values held about 5 MB through a purge of a 1 GB
// transcript, for values that are rare.
const maxPooledS2 = 1 << 20

func putS2Buf(bp *[]byte) {
	if cap(*bp) <= maxPooledS2 {
		s2Bufs.Put(bp)
	}
}

// packWriter appends frames to one new pack file.
type packWriter struct {
	id   string
	path string
	f    *os.File
	off  int64
}

// newPackWriter creates packs/<random id>.pack (0600, exclusive create).
func (s *Store) newPackWriter() (*packWriter, error) {
	if err := fsutil.MkdirPrivate(s.path(packsDir)); err != nil {
		return nil, err
	}
	for range 10 {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		id := hex.EncodeToString(r[:])
		path := s.packPath(id)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|fsutil.NoFollow, fsutil.FileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(packMagic); err != nil {
			f.Close()
			os.Remove(path)
			return nil, err
		}
		return &packWriter{id: id, path: path, f: f, off: int64(len(packMagic))}, nil
	}
	return nil, errors.New("cannot create a pack file: names keep clashing")
}

// add appends a frame and returns its location.
func (w *packWriter) add(codec Compression, frame []byte) (packLoc, error) {
	if _, err := w.f.Write(frame); err != nil {
		return packLoc{}, err
	}
	loc := packLoc{pack: w.id, off: w.off, clen: int64(len(frame)), codec: codec, crc: frameCRC(frame)}
	w.off += int64(len(frame))
	return loc, nil
}

// packFile returns the BlobFile of a pack entry.
func (s *Store) packFile(e *packEntry) BlobFile {
	return BlobFile{Path: s.packPath(e.loc.pack), Compression: e.loc.codec, Size: e.loc.clen,
		Packed: true, Offset: e.loc.off, CRC: e.loc.crc, RawSize: e.meta.BytesUncompressed}
}

// openPacked opens a blob's frame for verified reading. A frame past the
// pack's end, or whose CRC does not match, is ErrCorrupt with a reason.
func (s *Store) openPacked(key Key, bf BlobFile) (io.ReadCloser, error) {
	f, err := fsutil.OpenPrivate(bf.Path, os.O_RDONLY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s (%s): %w: its pack is missing", key, bf.Path, ErrCorrupt)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", bf.Path)
	}
	if bf.Offset < int64(len(packMagic)) || bf.Offset+bf.Size > fi.Size() {
		f.Close()
		return nil, fmt.Errorf("%s (%s): %w: frame at %d+%d is past the pack's end (%d bytes; truncated pack?)",
			key, bf.Path, ErrCorrupt, bf.Offset, bf.Size, fi.Size())
	}
	sec := io.NewSectionReader(f, bf.Offset, bf.Size)
	if bf.Size > maxMemFrame {
		if bf.Compression != Zstd {
			f.Close()
			return nil, fmt.Errorf("%s (%s): %w: %d-byte %s frame is too large", key, bf.Path, ErrCorrupt, bf.Size, bf.Compression)
		}
		r, release, err := blobReader(sec, Zstd)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s (%s): %w", key, bf.Path, err)
		}
		return &verifyReader{r: r, f: f, release: release, h: key.newHash(), key: key, path: bf.Path}, nil
	}
	frame := make([]byte, bf.Size)
	_, err = io.ReadFull(sec, frame)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", key, bf.Path, err)
	}
	if frameCRC(frame) != bf.CRC {
		return nil, fmt.Errorf("%s (%s at %d): %w: frame fails its checksum", key, bf.Path, bf.Offset, ErrCorrupt)
	}
	var content []byte
	switch bf.Compression {
	case None:
		content = frame
	case S2:
		if content, err = s2.Decode(nil, frame); err != nil {
			return nil, fmt.Errorf("%s (%s): %w: %v", key, bf.Path, ErrCorrupt, err)
		}
	case Zstd:
		r, release, err := blobReader(bytes.NewReader(frame), Zstd)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", key, bf.Path, err)
		}
		content, err = readAllHint(r, bf.RawSize)
		release()
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", key, bf.Path, err)
		}
	default:
		return nil, fmt.Errorf("%s (%s): %w: unknown codec %q", key, bf.Path, ErrCorrupt, bf.Compression)
	}
	return &verifyReader{r: bytes.NewReader(content), h: key.newHash(), key: key, path: bf.Path}, nil
}
