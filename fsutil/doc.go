// Package fsutil holds the careful file operations every ccm component
// shares: atomic replacement (temp file in the same directory, fsync,
// rename, directory fsync), private modes from the moment of creation,
// and flock-based locks with a bounded wait.
//
// ccm's store can hold the only copy of removed content and its rewrites
// replace live transcripts, so these helpers follow a backup tool's
// durability rules rather than a cache's.
package fsutil
