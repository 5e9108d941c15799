// Package fsutil holds the careful file operations every ccm component
// shares: atomic replacement (temp file in the same directory, sync,
// rename, directory sync), private modes from the moment of creation,
// locks with a bounded wait, durable syncs, and the detection of other
// processes writing a file.
//
// ccm's store can hold the only copy of removed content and its rewrites
// replace live transcripts, so these helpers follow a backup tool's
// durability rules rather than a cache's.
//
// Everything that differs between systems is here, in files named for the
// system (lock_unix.go, lock_windows.go, sync_darwin.go, ...), behind one
// API: flock or LockFileEx; rename(2) or a Windows rename that may find
// the target in use (ErrInUse); fsync, F_FULLFSYNC on macOS, or
// FlushFileBuffers; syncfs(2) where it is trusted (ErrNoSyncFS elsewhere);
// /proc, proc_info(2) on macOS, or a share-mode probe on Windows to find
// writers (ok false where none of them can tell). The rest of ccm builds
// unchanged for Linux, macOS and Windows.
package fsutil
