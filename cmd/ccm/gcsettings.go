package main

import "ccm/sessions"

// readMemoryLimit is the runtime's soft memory limit for the commands that
// index a whole transcript without counting tokens (check, analyze
// --no-tokens). Their live heap is the index (about 230 bytes a record:
// 22 MB for the 103k records of a 1 GB transcript) plus the reader's
// batches (a few MB, and the longest line): with the default pacing the
// heap grew to twice that, 90 MB of RSS on 1 GB. At 48 MiB the collector
// runs a little more often on such a file (23 cycles instead of 9) and
// RSS stays under 64 MB; on smaller files the heap never reaches it.
const readMemoryLimit = 48 << 20

// purgeMemoryLimitFor is the soft memory limit for purging transcripts of
// up to largest bytes, into the store or not. A purge's live heap grows
// with the transcript (the index, the plan, the store's pending index
// lines). Measured on the benchmark mix (the runtime's live heap, sampled
// through one purge): 66-68 MiB at 1 GB with the store, once the plan kept
// its stubs compact, dropped the scan's microcompaction and pin state when
// it was made, and the store stopped pooling encode buffers over 1 MiB; the
// estimate is 34 MiB plus 28 MiB a GiB with the store, 30 MiB plus 25 MiB
// a GiB without. A fixed limit of 72 MiB sat below the live heap of a 1 GB
// transcript, and the collector ran back to back (705 collections,
// 2.1-2.5x the time per MB of a 200 MB file). The limit is 1.4x the
// estimate, and never under purgeMemoryLimit, which small transcripts
// keep: 72 MiB up to about 700 MB, 84 MiB at 1 GB (peak RSS 93.9 MiB and
// 4.48 s with the copy before it, against 117.6 MiB and 4.10 s at 110 MiB:
// scripts/bench-purge-limit.sh 1GB 84 110 5), 77 MiB without the store.
func purgeMemoryLimitFor(largest int64, store bool) int64 {
	live := 30<<20 + largest*25/1024 // 25 MiB a GiB
	if store {
		live = 34<<20 + largest*28/1024
	}
	return max(purgeMemoryLimit, live*14/10)
}

// largestFile is the size of the largest of files, as the selection
// found them.
func largestFile(files []sessions.Target) int64 {
	var n int64
	for _, f := range files {
		n = max(n, f.File.Size)
	}
	return n
}
