package purge

import (
	"time"

	"ccm/ccm"
)

// BackupMode says how the original is kept before it is replaced.
type BackupMode string

// Backup modes. Link (the default) hard-links the original inode, which
// costs nothing and keeps the exact bytes; Copy writes a copy; Zstd a
// compressed copy; None keeps nothing.
const (
	BackupLink BackupMode = "link"
	BackupCopy BackupMode = "copy"
	BackupZstd BackupMode = "zstd"
	BackupNone BackupMode = "none"
)

// Options configure a purge. The zero value is not useful; start from
// DefaultOptions.
type Options struct {
	KeepThinking    bool // keep every thinking block
	KeepProgress    bool // keep progress records
	KeepBookkeeping bool // keep every per-turn bookkeeping record
	RepairOnly      bool // only repair the chain and tool pairs
	NoStore         bool // leave large content in place (never truncate)

	Threshold   int // bytes above which tool output is moved to the store
	ImageMin    int // bytes above which a base64 image is moved to the store
	RecentTurns int // the recent window starts no earlier than the Nth-last real user prompt
	// RecentResults bounds the recent window in tool results as well: it
	// starts no earlier than the Nth-last one (0: no bound).
	RecentResults int
	// OldThreshold replaces Threshold before the recent window (the later
	// of the RecentTurns and RecentResults bounds; 0: Threshold
	// everywhere).
	OldThreshold int

	// Microcompaction rules, each on unless its Keep flag is set.
	KeepStaleReads bool // Read results of files read again or changed later
	KeepDuplicates bool // earlier copies of tool outputs repeated byte for byte
	KeepOldTodos   bool // TodoWrite lists a later TodoWrite replaced
	// KeepHookContext keeps hook context replayed on resume that a later
	// hook gave again byte for byte.
	KeepHookContext bool

	PinDefault ccm.PinLevel // pin level of stubs that no directive covers

	ArchiveCompacted bool // move everything before the last compact boundary into the store
	InjectCompaction bool // write a compaction pair in front of the last KeepTurns turns
	KeepTurns        int

	// Live marks a session Claude Code is writing right now (--current):
	// its in-flight last turn is left alone.
	Live bool
	// LiveWindow makes a transcript written to more recently than this
	// live as well (ccm purge uses ActiveWindow); zero never infers it.
	LiveWindow time.Duration

	DryRun bool
	Backup BackupMode
	// Tokens asks for cl100k estimates of the resume context before and after.
	Tokens bool

	// Store receives the removed content; nil with NoStore or DryRun.
	Store *ccm.Store
	// LockDir holds the sidecar locks that keep two ccm processes from
	// rewriting one transcript at once.
	LockDir string
	// LockWait bounds how long to wait for that lock.
	LockWait time.Duration
	// Now is the clock, for backup names and tests.
	Now func() time.Time
}

// DefaultOptions are the defaults of ccm purge.
func DefaultOptions() Options {
	return Options{
		Threshold:     5000,
		ImageMin:      1000,
		RecentTurns:   2,
		RecentResults: 10,
		OldThreshold:  1000,
		KeepTurns:     4,
		Backup:        BackupLink,
		LockWait:      10 * time.Second,
		Now:           time.Now,
	}
}
