package synth

import (
	"encoding/base64"
	"math/rand/v2"
	"time"
)

// This file holds the seeded randomness: one PCG stream per generator, and
// helpers for the identifiers Claude Code writes (v4 uuids, msg_/req_/toolu_
// ids, base64 signatures and images). Everything derives from Options.Seed, so
// the same seed always yields the same bytes.

// uid is a uuid in its 36-character text form; fixed size so that keeping a
// few of them per turn never allocates.
type uid [36]byte

func (u uid) String() string { return string(u[:]) }

// newRand returns the PCG stream for seed; stream selects an independent
// sequence (main transcript, per-call text, subagent files).
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15^stream))
}

// newUUID draws a random version-4 uuid.
func newUUID(r *rand.Rand) uid {
	var raw [16]byte
	a, b := r.Uint64(), r.Uint64()
	for i := 0; i < 8; i++ {
		raw[i] = byte(a >> (8 * i))
		raw[8+i] = byte(b >> (8 * i))
	}
	raw[6] = raw[6]&0x0f | 0x40
	raw[8] = raw[8]&0x3f | 0x80
	var u uid
	j := 0
	for i, c := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			u[j] = '-'
			j++
		}
		u[j] = hexDigits[c>>4]
		u[j+1] = hexDigits[c&0xf]
		j += 2
	}
	return u
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// appendID appends prefix followed by n base62 characters, the shape of
// "toolu_01…", "msg_01…" and "req_011C…" ids.
func appendID(dst []byte, r *rand.Rand, prefix string, n int) []byte {
	dst = append(dst, prefix...)
	var x uint64
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			x = r.Uint64()
		}
		dst = append(dst, base62[x%62])
		x /= 62
	}
	return dst
}

// newID returns appendID as a string.
func newID(r *rand.Rand, prefix string, n int) string {
	var b [48]byte
	return string(appendID(b[:0], r, prefix, n))
}

// between returns a uniform int in [lo, hi].
func between(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.IntN(hi-lo+1)
}

// fillRandom fills p with random bytes.
func fillRandom(r *rand.Rand, p []byte) {
	for i := 0; i < len(p); i += 8 {
		x := r.Uint64()
		for j := i; j < i+8 && j < len(p); j++ {
			p[j] = byte(x)
			x >>= 8
		}
	}
}

// appendBase64 appends the base64 form of n random bytes that start with head
// (a fixed magic prefix such as the PNG signature), using scratch as the
// temporary raw buffer. It returns the grown dst and scratch.
func appendBase64(dst, scratch []byte, r *rand.Rand, head []byte, n int) ([]byte, []byte) {
	scratch = append(scratch[:0], head...)
	if n > len(scratch) {
		scratch = append(scratch, make([]byte, n-len(scratch))...)
		fillRandom(r, scratch[len(head):])
	}
	return base64.StdEncoding.AppendEncode(dst, scratch), scratch
}

// pngHead is the PNG file signature plus an IHDR chunk start, so images
// decode as "iVBORw0KGgo…" like real pasted screenshots.
var pngHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x03\x20\x00\x00\x02\x58\x08\x06\x00\x00\x00")

// sigHead makes signatures start with "Eu", like real thinking signatures.
var sigHead = []byte{0x12, 0xe8}

// tsLayout is Claude Code's timestamp form: ISO-8601, milliseconds, Z.
const tsLayout = "2006-01-02T15:04:05.000Z"

// appendTime appends the quoted timestamp for ms (Unix milliseconds).
func appendTime(dst []byte, ms int64) []byte {
	dst = append(dst, '"')
	dst = time.UnixMilli(ms).UTC().AppendFormat(dst, tsLayout)
	return append(dst, '"')
}
