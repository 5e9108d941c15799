package purge

import (
	"io"
	"time"

	"ccm/ccm"
	"ccm/transcript/rewrite"
)

// BackupMode says how the original is kept before it is replaced
// (rewrite.BackupMode).
type BackupMode = rewrite.BackupMode

// Backup modes, as in package rewrite: Link hard-links the original inode,
// Copy writes a copy, Zstd (the default, DefaultBackup) a compressed copy,
// None keeps nothing.
const (
	BackupLink = rewrite.BackupLink
	BackupCopy = rewrite.BackupCopy
	BackupZstd = rewrite.BackupZstd
	BackupNone = rewrite.BackupNone

	DefaultBackup = rewrite.DefaultBackup
)

// BackupStamp is the layout of the time stamp in backup names
// (rewrite.BackupStamp).
const BackupStamp = rewrite.BackupStamp

// RestoreTag ends the names of the backups a restore makes
// (rewrite.RestoreTag).
const RestoreTag = rewrite.RestoreTag

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
	// InferLive makes a transcript written to within transcript.LiveWindow
	// live as well (the live rule); without it only Live says so.
	InferLive bool
	// LiveNeedsWriter narrows InferLive for a file the user named: a
	// recent mtime makes it live only when another process holds it open
	// for writing or a Claude Code client runs in its project or on it
	// (read from /proc), or when /proc cannot tell. A file just copied or
	// checked out has a new mtime and no writer.
	LiveNeedsWriter bool

	DryRun bool
	// DryRunOutput, in a dry run, receives the file the purge would write
	// (ccm report measures it turn by turn); nil discards it.
	DryRunOutput io.Writer
	Backup       BackupMode
	// Tokens asks for cl100k estimates of the resume context before and after.
	Tokens bool

	// Store receives the removed content; nil with NoStore or DryRun.
	Store *ccm.Store
	// Batch, when set, is a batch of Store that several purges share (a
	// batch purge): their blobs go into its one pack, and each purge
	// makes its own durable with Batch.Sync before its rename. The caller
	// commits it once every purge is done. Nil: each purge has its own.
	Batch *ccm.Batch
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
		Backup:        DefaultBackup,
		LockWait:      10 * time.Second,
		Now:           time.Now,
	}
}
