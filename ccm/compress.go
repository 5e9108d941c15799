package ccm

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compression is how a blob is stored: "zstd", "gzip" or "none" (raw).
// The file extension says which: .zst, .gz, .txt.
type Compression string

// The stored forms.
const (
	Zstd Compression = "zstd"
	Gzip Compression = "gzip"
	None Compression = "none"
)

// minCompressSize is claude-context-manager's threshold: smaller content is
// stored raw, where a frame header would eat most of any gain.
const minCompressSize = 1024

// encoderLevel is zstd's fastest level. On tool-output text it compresses
// about 1.6 times faster than the default level for output about 7 %
// larger (measured on this project's VM: 185 vs 116 MB/s per core, ratio
// 3.16 vs 3.38); storing is on the path of every purge and hook.
const encoderLevel = zstd.SpeedFastest

// inMemoryLimit is the size up to which content is compressed with one
// EncodeAll call; larger content streams through a concurrent encoder.
const inMemoryLimit = 4 << 20

// compressions lists the stored forms in the order readers probe them,
// claude-context-manager's order.
var compressions = []Compression{Zstd, Gzip, None}

// Ext returns the file extension of the form.
func (c Compression) Ext() string {
	switch c {
	case Zstd:
		return ".zst"
	case Gzip:
		return ".gz"
	}
	return ".txt"
}

// ParseCompression reads a $CCM_COMPRESSION value: auto (zstd), zstd, gzip
// or none. The empty string is auto.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "zstd":
		return Zstd, nil
	case "gzip":
		return Gzip, nil
	case "none":
		return None, nil
	}
	return "", fmt.Errorf("invalid $CCM_COMPRESSION %s: want auto, zstd, gzip or none", quoteShort(s))
}

var (
	encOnce sync.Once
	encAll  *zstd.Encoder // EncodeAll is safe for concurrent use

	zstdWriters = sync.Pool{New: func() any {
		// Streaming encoders use every core: a 100 MB tool output then
		// compresses at about twice the single-threaded speed.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(encoderLevel),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		if err != nil {
			panic(err) // only for invalid options
		}
		return e
	}}
	gzipWriters = sync.Pool{New: func() any {
		w, err := gzip.NewWriterLevel(nil, 6) // claude-context-manager's level
		if err != nil {
			panic(err)
		}
		return w
	}}
	zstdReaders = sync.Pool{New: func() any {
		// Concurrency 1 decodes in the caller's goroutine: no background
		// goroutines to leak when a reader is abandoned half-way.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			panic(err)
		}
		return d
	}}
	bufWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}
)

// encodeAll compresses small content in one call with a shared encoder.
// It is lazily created so that commands that never store pay nothing.
func encodeAll(src []byte) []byte {
	encOnce.Do(func() {
		var err error
		encAll, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(encoderLevel),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		if err != nil {
			panic(err)
		}
	})
	buf := encBufs.Get().(*[]byte)
	return encAll.EncodeAll(src, (*buf)[:0])
}

// releaseEncoded returns a buffer from encodeAll to the pool.
func releaseEncoded(b []byte) {
	if cap(b) <= 8<<20 {
		encBufs.Put(&b)
	}
}

// encBufs recycles EncodeAll outputs: allocating (and zeroing) a fresh
// buffer per blob showed up in profiles of a purge's many Puts.
var encBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// errNoShrink stops a compression that has already reached the raw size.
var errNoShrink = errors.New("compression does not shrink the content")

// capWriter counts bytes and fails once they reach limit, so content that
// does not compress is noticed without writing it twice in full.
type capWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) >= c.limit {
		return 0, errNoShrink
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// compressTo streams src (size bytes, or -1 when unknown) into w in form
// c. It returns the number of bytes written, or errNoShrink when a known
// size is reached before the end.
func compressTo(w io.Writer, src io.Reader, size int64, c Compression) (int64, error) {
	limit := size
	if size < 0 {
		limit = math.MaxInt64
	}
	cw := &capWriter{w: w, limit: limit}
	bw := bufWriters.Get().(*bufio.Writer)
	bw.Reset(cw)
	defer func() { bw.Reset(nil); bufWriters.Put(bw) }()
	var enc io.WriteCloser
	switch c {
	case Zstd:
		e := zstdWriters.Get().(*zstd.Encoder)
		if size >= 0 {
			e.ResetContentSize(bw, size)
		} else {
			e.Reset(bw)
		}
		defer func() { e.Reset(nil); zstdWriters.Put(e) }()
		enc = e
	case Gzip:
		g := gzipWriters.Get().(*gzip.Writer)
		g.Reset(bw)
		defer func() { g.Reset(nil); gzipWriters.Put(g) }()
		enc = g
	default:
		return 0, fmt.Errorf("cannot compress as %q", c)
	}
	if _, err := io.Copy(enc, src); err != nil {
		enc.Close()
		return 0, err
	}
	if err := enc.Close(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return cw.n, nil
}

// blobReader returns a reader of the content of blob file f stored in form
// c, and a function that returns pooled state. Decoder errors are content
// errors and are marked ErrCorrupt; errors reading the file are not.
func blobReader(f io.Reader, c Compression) (io.Reader, func(), error) {
	src := &fileErrReader{r: f}
	switch c {
	case Zstd:
		d := zstdReaders.Get().(*zstd.Decoder)
		if err := d.Reset(bufio.NewReaderSize(src, 128<<10)); err != nil {
			zstdReaders.Put(d)
			return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return &decodeErrReader{r: d, src: src}, func() { d.Reset(nil); zstdReaders.Put(d) }, nil
	case Gzip:
		g, err := gzip.NewReader(bufio.NewReaderSize(src, 128<<10))
		if err != nil {
			if src.err != nil {
				return nil, nil, src.err
			}
			return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return &decodeErrReader{r: g, src: src}, func() { g.Close() }, nil
	}
	return src, func() {}, nil
}

// fileErrReader remembers the last error of the underlying file, to tell
// an I/O error from a decoding error.
type fileErrReader struct {
	r   io.Reader
	err error
}

func (f *fileErrReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		f.err = err
	}
	return n, err
}

// decodeErrReader marks decoder failures as corruption.
type decodeErrReader struct {
	r   io.Reader
	src *fileErrReader
}

func (d *decodeErrReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		if d.src.err != nil {
			return n, d.src.err
		}
		return n, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return n, err
}
