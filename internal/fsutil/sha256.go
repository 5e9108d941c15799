package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
)

// FileSHA256 reads a regular file (OpenRegular: never blocks on a FIFO or
// device) and returns its size and its SHA-256 in hex: what an archive's
// or a bundle's manifest says of a file, to check one against the other.
func FileSHA256(path string) (int64, string, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
