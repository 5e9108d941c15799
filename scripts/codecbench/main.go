// Command codecbench compares the codecs the pack store could use on the
// blobs of a real store: it reads every blob of STORE (as a purge left
// them), then compresses them all, one core, with each codec, and prints
// MB/s of input per core and the total stored size (content under 1 KiB,
// or that does not shrink, stored raw, as the store does).
//
//	go run ./scripts/codecbench STORE [ROUNDS]
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: codecbench STORE [ROUNDS]")
		os.Exit(2)
	}
	rounds := 3
	if len(os.Args) > 2 {
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	blobs, total := readBlobs(os.Args[1])
	fmt.Printf("%d blobs, %.1f MB uncompressed\n", len(blobs), float64(total)/1e6)
	zf, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	zd, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	codecs := []struct {
		name string
		enc  func(dst, src []byte) []byte
	}{
		{"zstd fastest", func(d, s []byte) []byte { return zf.EncodeAll(s, d[:0]) }},
		{"zstd default", func(d, s []byte) []byte { return zd.EncodeAll(s, d[:0]) }},
		{"s2 default", func(d, s []byte) []byte { return s2.Encode(d[:cap(d)], s) }},
		{"s2 better", func(d, s []byte) []byte { return s2.EncodeBetter(d[:cap(d)], s) }},
		{"snappy", func(d, s []byte) []byte { return snappy.Encode(d[:cap(d)], s) }},
	}
	var base int64
	for _, c := range codecs {
		best := time.Duration(1 << 62)
		var size int64
		buf := make([]byte, 0, 8<<20)
		for r := 0; r < rounds; r++ {
			size = 0
			start := time.Now()
			for _, b := range blobs {
				if len(b) < 1024 {
					size += int64(len(b))
					continue
				}
				if n := s2.MaxEncodedLen(len(b)); cap(buf) < n {
					buf = make([]byte, 0, n)
				}
				out := c.enc(buf, b)
				size += int64(min(len(out), len(b)))
			}
			best = min(best, time.Since(start))
		}
		if base == 0 {
			base = size
		}
		fmt.Printf("%-13s %7.1f MB/s a core  %7.1f MB stored  %.2fx of zstd fastest  ratio %.2f\n",
			c.name, float64(total)/1e6/best.Seconds(), float64(size)/1e6, float64(size)/float64(base), float64(total)/float64(size))
	}
}

func readBlobs(root string) ([][]byte, int64) {
	dec, _ := zstd.NewReader(nil)
	files, _ := filepath.Glob(filepath.Join(root, "blobs", "*"))
	var out [][]byte
	var total int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		if filepath.Ext(f) == ".zst" {
			if b, err = dec.DecodeAll(b, nil); err != nil {
				panic(err)
			}
		}
		out = append(out, b)
		total += int64(len(b))
	}
	return out, total
}
