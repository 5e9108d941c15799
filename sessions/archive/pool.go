package archive

import (
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Encoders, decoders and copy buffers are reused across sessions: a new
// zstd encoder allocates and clears its match tables and window (several
// MB) every time, which cost more than compressing a small session.
var (
	encoders   sync.Map // zstd.EncoderLevel -> *sync.Pool of *zstd.Encoder
	decoders   = sync.Pool{New: func() any { return newDecoder() }}
	copyBuffer = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
)

// getEncoder returns an encoder of the level writing to w: one
// goroutine, so that --jobs decides how many cores archiving uses.
func getEncoder(level zstd.EncoderLevel, w io.Writer) *zstd.Encoder {
	pool, _ := encoders.LoadOrStore(level, &sync.Pool{})
	if e, ok := pool.(*sync.Pool).Get().(*zstd.Encoder); ok {
		e.Reset(w)
		return e
	}
	// Options are constants: NewWriter cannot fail with them.
	e, _ := zstd.NewWriter(w, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
	return e
}

// putEncoder returns an encoder for reuse, holding no writer.
func putEncoder(level zstd.EncoderLevel, e *zstd.Encoder) {
	e.Reset(nil)
	pool, _ := encoders.Load(level)
	pool.(*sync.Pool).Put(e)
}

// newDecoder is synchronous (one goroutine) and refuses windows over 64
// MB, so a hostile archive cannot make it allocate more.
func newDecoder() *zstd.Decoder {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	return d
}

func getBuffer() []byte  { return *copyBuffer.Get().(*[]byte) }
func putBuffer(b []byte) { copyBuffer.Put(&b) }
