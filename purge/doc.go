// Package purge shrinks and repairs Claude Code transcripts without losing
// a byte of the user's data.
//
// A purge reads the file twice, streaming. The first pass indexes it
// (transcript.Index) and collects what the plan needs: real user prompts,
// pin directives, which records carry large content, the per-turn
// bookkeeping records. The plan then decides, before anything is written,
// every record to drop, every parent to relink, every block to remove and
// every tool_result to synthesise, and checks the structure it will
// produce with the same rules ccm check applies. The second pass writes
// the new file, splicing edits into each line at the offsets gjson reports
// so that untouched bytes stay identical, and moves large content into the
// CCM store behind stubs that ccm restore expands again.
//
// The new file replaces the old one atomically, after a backup, with the
// lines Claude Code appended meanwhile copied over (see package rewrite).
package purge
