// Package bundle moves a Claude Code session between machines and paths:
// Make writes one self-contained, verified bundle of a session (the
// archive format of sessions/archive: its files, the content of every
// stub they name, a note), leaving the session in place; Import puts a
// bundle's session where the client finds it for another project root,
// and maybe under a new id.
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
