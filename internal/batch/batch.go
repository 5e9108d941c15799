// Package batch is ccm's one worker pool: it runs a command over many
// items (files and sessions of purge, archive, unarchive, clean; the
// store's listing and verification; prune's reads and deletions). Which
// sessions a batch works on is the sessions package's selection.
package batch
