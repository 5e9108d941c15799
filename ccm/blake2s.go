package ccm

import (
	"encoding/binary"
	"hash"
	"math/bits"
)

// BLAKE2s (RFC 7693) with an 8-byte digest, unkeyed: what claude-context-manager's
// successor used for its "b2s:" keys (hashlib.blake2s(content,
// digest_size=8)). It exists only to verify legacy blobs on read, so it is
// the plain reference algorithm; golang.org/x/crypto is not a dependency of
// this module and one small verifier does not justify adding it.

var blake2sIV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

var blake2sSigma = [10][16]byte{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

const blake2sBlock = 64

type blake2s struct {
	h    [8]uint32
	t    uint64
	buf  [blake2sBlock]byte
	nbuf int
	size int
}

// newBlake2s64 returns an unkeyed BLAKE2s hash with an 8-byte digest.
func newBlake2s64() hash.Hash { return newBlake2s(8) }

func newBlake2s(size int) *blake2s {
	d := &blake2s{size: size}
	d.Reset()
	return d
}

func (d *blake2s) Reset() {
	d.h = blake2sIV
	// Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
	d.h[0] ^= 0x01010000 ^ uint32(d.size)
	d.t, d.nbuf = 0, 0
}

func (d *blake2s) Size() int      { return d.size }
func (d *blake2s) BlockSize() int { return blake2sBlock }

func (d *blake2s) Write(p []byte) (int, error) {
	n := len(p)
	// The last block is compressed with the final flag, so a full buffer is
	// only compressed once more input arrives.
	for len(p) > 0 {
		if d.nbuf == blake2sBlock {
			d.t += blake2sBlock
			d.compress(d.buf[:], false)
			d.nbuf = 0
		}
		c := copy(d.buf[d.nbuf:], p)
		d.nbuf += c
		p = p[c:]
	}
	return n, nil
}

func (d *blake2s) Sum(b []byte) []byte {
	c := *d
	c.t += uint64(c.nbuf)
	for i := c.nbuf; i < blake2sBlock; i++ {
		c.buf[i] = 0
	}
	c.compress(c.buf[:], true)
	var out [32]byte
	for i, v := range c.h {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return append(b, out[:c.size]...)
}

func (d *blake2s) compress(block []byte, last bool) {
	var m [16]uint32
	for i := range m {
		m[i] = binary.LittleEndian.Uint32(block[4*i:])
	}
	var v [16]uint32
	copy(v[:8], d.h[:])
	copy(v[8:], blake2sIV[:])
	v[12] ^= uint32(d.t)
	v[13] ^= uint32(d.t >> 32)
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, e int, x, y uint32) {
		v[a] = v[a] + v[b] + x
		v[e] = bits.RotateLeft32(v[e]^v[a], -16)
		v[c] = v[c] + v[e]
		v[b] = bits.RotateLeft32(v[b]^v[c], -12)
		v[a] = v[a] + v[b] + y
		v[e] = bits.RotateLeft32(v[e]^v[a], -8)
		v[c] = v[c] + v[e]
		v[b] = bits.RotateLeft32(v[b]^v[c], -7)
	}
	for r := 0; r < 10; r++ {
		s := &blake2sSigma[r]
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range d.h {
		d.h[i] ^= v[i] ^ v[i+8]
	}
}
