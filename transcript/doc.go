// Package transcript reads Claude Code session transcripts (JSONL files
// under ~/.claude/projects) the way Claude Code does when it resumes a
// session, without ever changing a byte of the lines it passes on.
//
// The Reader splits a stream into lines of any length with memory bounded
// by the longest line. Record accessors read fields with gjson directly on
// the raw bytes. Index keeps a small set of facts per record and rebuilds
// the conversation tree: roots, leaves, forks, the active chain that
// resume walks, and the API message sequence it produces. Discovery finds
// sessions under the Claude config directory.
package transcript
