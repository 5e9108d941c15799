package main

import (
	"fmt"
	"io"

	"ccm/internal/fsutil"
)

// noteFallbacks makes a -v run say, once each, where the filesystem
// cannot sync as ccm asks (no F_FULLFSYNC on macOS, a syncfs that reaches
// no storage on FUSE) and it falls back to fsync file by file. Without -v
// the fallback is silent: it is still a sync.
func noteFallbacks(w io.Writer, verbose bool) {
	if !verbose {
		return
	}
	fsutil.SetNotify(func(msg string) { fmt.Fprintf(w, "ccm: %s\n", msg) })
}
