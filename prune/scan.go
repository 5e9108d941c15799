package prune

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"ccm/ccm"
)

// ErrNoTranscripts stops gc when no transcript was found: with a wrong
// --claude-dir every blob would look unreferenced.
var ErrNoTranscripts = errors.New("no transcripts found")

// IsTranscriptName reports whether a file may reference stored blobs:
// *.jsonl transcripts (subagent files included), purge backups
// (<name>.jsonl.backup.<stamp>) and temp files of a rewrite in progress
// (.<name>.jsonl.ccm-tmp-*), and the manifests of ccm archive
// (<session>.manifest.json), which list the keys of archived transcripts.
// Reading one file too many only keeps a blob.
func IsTranscriptName(name string) bool {
	return strings.Contains(name, ".jsonl") || strings.HasSuffix(name, ".manifest.json")
}

// keyTail is the longest key minus one byte: what must be carried from one
// read to the next so a key split across reads is still seen whole.
const keyTail = len("sha256:") + 64 - 1

// scanReader adds the keys in r's bytes to refs, a key split between two
// reads included. buf is the worker's buffer.
func scanReader(ctx context.Context, r io.Reader, buf []byte, refs Refs, progress func(int64)) (int64, error) {
	var read int64
	carry := 0
	for {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		n, err := io.ReadFull(r, buf[carry:])
		read += int64(n)
		if progress != nil && n > 0 {
			progress(int64(n))
		}
		data := buf[:carry+n]
		findKeys(data, refs)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return read, nil
		}
		if err != nil {
			return read, err
		}
		carry = copy(buf, data[max(0, len(data)-keyTail):])
	}
}

var (
	tagSHA = []byte("sha256:")
	tagB2S = []byte("b2s:")
)

// findKeys adds every well-formed key in data to refs. Both searches use
// bytes.Index, which runs on SIMD over the bytes between matches.
func findKeys(data []byte, refs Refs) {
	scanTag(data, tagSHA, 64, refs)
	scanTag(data, tagB2S, 16, refs)
}

func scanTag(data, tag []byte, digits int, refs Refs) {
	for i := 0; ; {
		j := bytes.Index(data[i:], tag)
		if j < 0 {
			return
		}
		start := i + j + len(tag)
		end := start + digits
		if end <= len(data) && lowerHex(data[start:end]) {
			k := ccm.Key(string(tag) + string(data[start:end]))
			if _, ok := refs[k]; !ok {
				refs[k] = struct{}{}
			}
		}
		i = start
	}
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// KeyCollector is an io.Writer that finds the store keys in the bytes
// written through it, as ScanReferences does in files, keys split between
// two writes included. ccm archive uses it to list the keys an archived
// transcript references while it compresses it.
type KeyCollector struct {
	Refs  Refs
	carry []byte
}

// Write scans p; it never fails.
func (k *KeyCollector) Write(p []byte) (int, error) {
	if k.Refs == nil {
		k.Refs = Refs{}
	}
	if len(k.carry) > 0 {
		// A key split between the last write and this one. The append
		// may use carry's spare capacity; carry itself is unchanged.
		findKeys(append(k.carry, p[:min(len(p), keyTail)]...), k.Refs)
	}
	findKeys(p, k.Refs)
	if len(p) >= keyTail {
		k.carry = append(k.carry[:0], p[len(p)-keyTail:]...)
	} else {
		k.carry = append(k.carry, p...)
		if len(k.carry) > keyTail {
			k.carry = append([]byte(nil), k.carry[len(k.carry)-keyTail:]...)
		}
	}
	return len(p), nil
}
