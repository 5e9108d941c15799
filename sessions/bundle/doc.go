// Package bundle moves a Claude Code session between machines and paths:
// Make writes one self-contained, verified bundle of a session, leaving
// the session in place; Import puts a bundle's session where the client
// finds it for another project root, and maybe under a new id.
//
// A bundle is an archive of sessions/archive's format, packed as a copy:
// the session's files (not its purge backups: the content they hold is
// carried), the stored content of its stubs as store/<hex> members listed
// in the manifest, and its own record as the declared part
// parts/bundle/bundle.json (the format, the machine, the ccm version, what
// was redacted). An import reads it through archive.Read, as unarchive
// reads an archive: the same member checks, the same scope (only the
// session's own paths), the same way into the store; each place is
// checked with archive.CheckPlace for the new folder and id. An archive
// made by ccm archive imports the same way.
//
// What moves: each record's cwd, and the fields the client locates a
// session's project by (a "relocated" record's relocatedCwd, a
// "worktree-state" record's originalCwd and worktreePath), from the old
// root to the new one, Windows paths included; with a new id, every
// record's sessionId and the names that carry it (the transcript, its
// companion folder, backups, file-history, todos, debug log). The
// conversation itself (messages, tool inputs and results) is never
// changed, and every other byte of a record stays as it was.
package bundle
