// Package prune keeps the CCM store bounded. It plans first and executes
// second, as restic's prune does: Decide is a pure function of the store's
// listing, a Policy, the current time and the keys transcripts reference,
// and returns a Plan that says for every blob whether it goes and why;
// Execute then deletes exactly what the plan says. A dry run prints the
// plan and changes nothing at all, not even a lock file.
//
// Within one run the rules apply in a fixed order: gc (blobs no transcript
// references), then age (last access older than a limit), then size
// (oldest access first until the store's bytes on disk fit a limit;
// unpinned blobs before soft-pinned ones, hard-pinned never). Only the size
// rule deletes soft-pinned blobs; nothing deletes hard-pinned ones.
//
// Prepare takes the store's exclusive lock with a bounded wait (a dry run
// takes it shared) and holds it until Close, so no writer can deduplicate
// against a blob between the plan and its deletion.
package prune
