package capture

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
)

// maxWhole bounds what ccm reads back from disk to store an output whole.
const maxWhole = 64 << 20

// persistedOutput returns the whole output of a Bash call the client cut.
// Claude Code 2.1.330 hands a hook at most 30,000 characters of a large
// output and names the file that holds all of it (persistedOutputPath,
// persistedOutputSize, under <session>/tool-results/); at PostToolUse that
// file holds the original bytes (observed: identical to the command's
// output). It is used only when it lies in the session's own tool-results
// folder, has the announced size, and starts with what the hook was shown.
func persistedOutput(c Call, shown []byte) []byte {
	rawPath, _, _ := Member(c.Response.Raw, "persistedOutputPath")
	rawSize, _, _ := Member(c.Response.Raw, "persistedOutputSize")
	path, size := gjson.Parse(rawPath).String(), gjson.Parse(rawSize).Int()
	if path == "" || size <= 0 || size > maxWhole || c.TranscriptPath == "" {
		return nil
	}
	dir := filepath.Join(strings.TrimSuffix(c.TranscriptPath, ".jsonl"), "tool-results")
	if filepath.Dir(filepath.Clean(path)) != filepath.Clean(dir) {
		return nil
	}
	b, err := fsutil.ReadRegular(path, maxWhole)
	if err != nil || int64(len(b)) != size || !bytes.HasPrefix(b, prefixOf(shown)) {
		return nil
	}
	return b
}

// wholeFile returns the whole file of a Read the client cut (its token
// cap keeps only the first lines: numLines < totalLines). The file is read
// again right after the tool read it and used only if it still starts with
// what the tool returned.
func wholeFile(c Call, shown []byte) []byte {
	f := c.Response.Get("file")
	if f.Get("startLine").Int() > 1 || f.Get("numLines").Int() >= f.Get("totalLines").Int() {
		return nil
	}
	path := f.Get("filePath").String()
	if path == "" || !filepath.IsAbs(path) {
		return nil
	}
	b, err := fsutil.ReadRegular(path, maxWhole)
	if err != nil || len(b) <= len(shown) || !bytes.HasPrefix(b, prefixOf(shown)) {
		return nil
	}
	return b
}

// prefixOf is what the original must start with: the shown text up to its
// last line break (the client may trim a trailing newline or cut a line).
func prefixOf(shown []byte) []byte {
	if i := bytes.LastIndexByte(shown, '\n'); i >= 0 {
		return shown[:i+1]
	}
	return nil
}
