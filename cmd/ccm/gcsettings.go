package main

import (
	"os"
	"runtime/debug"
)

// readMemoryLimit is the runtime's soft memory limit for the commands that
// index a whole transcript without counting tokens (check, analyze
// --no-tokens). Their live heap is the index (about 256 bytes a record:
// 25 MB for the 103k records of a 1 GB transcript) plus the reader's
// batches (a few MB, and the longest line): with the default pacing the
// heap grew to twice that, 90 MB of RSS on 1 GB. At 48 MiB the collector
// runs a little more often on such a file (8 cycles more on 1 GB) and
// RSS stays under 64 MB; on smaller files the heap never reaches it.
const readMemoryLimit = 48 << 20

// purgeGCPercent is the collector's pacing during a purge (GOGC): the
// next collection when the heap has grown by half of what is live. A
// fixed memory limit near the live heap made the collector run without
// pause once a 1 GB transcript's index, the store's encoders and the
// purge's own state filled it (700 collections, 18 % of the time, 2.1x
// the time per MB of a 200 MB file); pacing by a share of the live heap
// keeps the collector's work proportional to the file. purgeMemoryLimit
// still caps the heap.
const purgeGCPercent = 50

// paceGC sets the collector's pacing unless the user set $GOGC.
func paceGC(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
