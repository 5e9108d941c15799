package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
)

// TailCheck is how many bytes before a remembered end must be unchanged
// for a file that grew to count as appended to, not rewritten.
const TailCheck = 4096

// TailSum hashes the last TailCheck bytes of f before end (hex SHA-256).
// Claude Code only appends to a transcript: a file with the same device
// and inode, larger than when it was last read, whose bytes before that
// end still hash the same, has only had bytes added after it, and only
// those need reading again.
func TailSum(f *os.File, end int64) (string, error) {
	start := max(end-TailCheck, 0)
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}
