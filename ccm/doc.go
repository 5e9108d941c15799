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
// What a purge stores goes into packs (see Batch); single stores and
// everything claude-context-manager or earlier versions wrote are one file per
// blob, which every operation keeps reading:
//
//	<root>/packs/<id>.pack           one batch's blobs, a frame each (S2, zstd or raw)
//	<root>/packs/index.jsonl         the pack index: an append-only log of put,
//	                                 seen, access, pin and del lines
//	<root>/packs/index.cache         the replayed index in binary (a cache)
//	<root>/blobs/<hex>.zst|.gz|.txt  a blob file: zstd, gzip or raw
//	<root>/meta/<hex>.json           a blob file's metadata (Meta), 2-space JSON
//	<root>/index.jsonl               one line per new blob file (claude-context-manager's log)
//	<root>/last_key                  the most recently stored key
//	<root>/lock, <root>/meta.lock    flock files
//
// Blob files are written flat, as claude-context-manager did: measured at 100,000
// blobs on ext4, a two-character fan-out (blobs/<hh>/<hex>.zst) changed
// neither create nor lookup times. Readers accept the fan-out layout as
// well. Deleting a blob in a pack is a del line; Repack gives the bytes
// back by plan.
//
// The text formats that point into the store live elsewhere: the
// [CCM_CACHED] stub in ccm/stub, the ccm:pin directives in
// ccm/pins.
package ccm
