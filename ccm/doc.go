// Package ccm is the CCM store: a durable, content-addressed store of the
// content ccm removes from Claude Code transcripts (large tool outputs,
// images) and of large outputs the hooks keep out of the context.
//
// The store can hold the only copy of that content, so it follows a backup
// tool's rules rather than a cache's:
//
//   - Every write is atomic: a temp file in the destination directory,
//     fsync, rename, fsync of the directory. Files are created 0600 and
//     directories 0700, with no window in which they are looser.
//   - Every read is verified: the content is hashed as it streams out and a
//     mismatch is reported as ErrCorrupt; truncated or altered content is
//     never returned as if it were good.
//   - Every key that comes from outside (command line, stubs, metadata files)
//     is validated by ParseKey before it is used to build a path.
//   - Writers take a shared flock on <root>/lock and prune takes an exclusive
//     one, so prune never deletes a blob that a writer has just deduplicated
//     against. Waits are bounded and a held lock is reported as ErrLocked.
//
// The on-disk layout is the one of the Python tool ccm replaces, so existing
// caches keep working and that tool can still read what ccm writes:
//
//	<root>/blobs/<hex>.zst|.gz|.txt  content: zstd, gzip or raw
//	<root>/meta/<hex>.json           metadata (Meta), JSON with 2-space indent
//	<root>/index.jsonl               one line per newly stored blob
//	<root>/last_key                  the most recently stored key
//	<root>/CACHEDIR.TAG              tells backup tools this is a cache
//	<root>/lock, <root>/meta.lock    flock files
//
// New blobs are written flat, as the Python tool did: measured at 100,000
// blobs on ext4, a two-character fan-out (blobs/<hh>/<hex>.zst) changed
// neither create nor lookup times and cost the Python tool its ability to
// read the store. Readers accept the fan-out layout as well.
//
// The text formats that point into the store live elsewhere: the
// [CCM_CACHED] stub in internal/stub, the ccm:pin directives in
// internal/pins.
package ccm
