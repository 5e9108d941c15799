package prune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"ccm/ccm"
)

// ScanStats describes a reference scan.
type ScanStats struct {
	Roots    []string      `json:"roots"`
	Files    int           `json:"files"`
	Bytes    int64         `json:"bytes"`
	Keys     int           `json:"referenced_keys"`
	Duration time.Duration `json:"duration_ns"`
}

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

// ScanReferences finds every key mentioned anywhere in the transcripts
// under roots: any "sha256:<64 hex>" or "b2s:<16 hex>" in any line, in
// tool_result content, toolUseResult, nested blocks, hook output or text,
// JSON-escaped or not. It is a byte scan, not a JSON parse: a stub can sit
// anywhere and still count, and the scan runs at disk-cache speed. Roots
// that do not exist are skipped; if no transcript is found at all it
// returns ErrNoTranscripts. progress, if not nil, is called with bytes read.
func ScanReferences(ctx context.Context, roots []string, progress func(n int64)) (Refs, ScanStats, error) {
	start := time.Now()
	st := ScanStats{Roots: roots}
	var files []string
	var total int64
	for _, root := range roots {
		r, err := filepath.EvalSymlinks(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, st, err
		}
		err = filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err // an unreadable folder could hide references
			}
			if d.IsDir() || !IsTranscriptName(d.Name()) {
				return nil
			}
			fi, err := os.Stat(path) // follows a symlinked transcript
			if err != nil || !fi.Mode().IsRegular() {
				return err
			}
			files = append(files, path)
			total += fi.Size()
			return nil
		})
		if err != nil {
			return nil, st, fmt.Errorf("scan transcripts: %w", err)
		}
	}
	if len(files) == 0 {
		return nil, st, fmt.Errorf("%w under %s: refusing to treat every blob as unreferenced (wrong --claude-dir?)",
			ErrNoTranscripts, strings.Join(roots, " or "))
	}
	workers := runtime.GOMAXPROCS(0)
	if workers > len(files) {
		workers = len(files)
	}
	jobs := make(chan string)
	results := make([]Refs, workers)
	errs := make([]error, workers)
	sizes := make([]int64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			refs := Refs{}
			buf := make([]byte, 1<<20)
			for path := range jobs {
				if errs[w] != nil {
					continue // drain
				}
				n, err := scanFile(ctx, path, buf, refs, progress)
				sizes[w] += n
				if err != nil {
					errs[w] = fmt.Errorf("scan %s: %w", path, err)
				}
			}
			results[w] = refs
		}(w)
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, st, err
	}
	refs := results[0]
	for _, r := range results[1:] {
		for k := range r {
			refs[k] = struct{}{}
		}
	}
	st.Files = len(files)
	for _, n := range sizes {
		st.Bytes += n
	}
	st.Keys = len(refs)
	st.Duration = time.Since(start)
	return refs, st, nil
}

// keyTail is the longest key minus one byte: what must be carried from one
// read to the next so a key split across reads is still seen whole.
const keyTail = len("sha256:") + 64 - 1

// scanFile adds the keys in one file to refs (a zstd backup as it
// decompresses). buf is the worker's buffer.
func scanFile(ctx context.Context, path string, buf []byte, refs Refs, progress func(int64)) (int64, error) {
	if compressedBackup(path) {
		return scanCompressed(ctx, path, refs, progress)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return scanReader(ctx, f, buf, refs, progress)
}

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
