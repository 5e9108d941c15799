// Package synth is ccm's one deterministic, seeded generator of synthetic
// Claude Code session transcripts (JSONL). Tests use it for small files with
// planted defects; benchmarks use it for realistic transcripts of any size
// (see Benchmark for the 200 MB mix).
//
// Generate streams a main session file and returns a Manifest: what it wrote
// (counts per record type, lines, bytes, tool pairs, thinking blocks, images,
// compactions, prompts on the final active chain) and, for every planted
// defect, its kind, 1-based line number and the uuid / tool id involved. The
// manifest is kept while writing, never parsed back from the output, so it is
// an independent oracle for ccm's readers, checkers and repairers.
// WriteSubagent writes a sidechain (subagent) file.
//
// # Determinism and speed
//
// All randomness comes from PCG streams seeded by Options.Seed; timestamps
// start at a seed-derived epoch and only move forward, a few seconds per
// record; uuids are random version-4 uuids from the same stream. The same
// Options always give the same bytes. Records are built by appending bytes
// with a small JSON string escaper (JSON.stringify's output: non-ASCII and
// emoji stay raw UTF-8), not with encoding/json, and free text comes from a
// fixed word list, so generation runs at roughly 200+ MB/s. Memory is bounded
// by the largest record (a few MB), whatever the target size.
//
// # Shape (2.0.76 style, the default)
//
// Mirrors docs/transcript-format.md and the 210 MB file the earlier tools
// were measured on (docs/earlier-tools.md, "Reference figures"): per turn a
// prompt, 1–4 tool rounds of 1–3 parallel tool_uses, and a final reply.
// Assistant messages are split one content block per line (thinking, text,
// tool_use) sharing message.id, requestId and usage, chained by parentUuid.
// Every tool_use is answered in the next user message, one user record per
// result with a top-level toolUseResult copy in the tool's real shape. The
// result of the last call continues the chain; the others hang off the first
// tool_use line of the message, as in real files (docs/transcript-format.md,
// "One response, several lines"), so they are off the naive parentUuid walk.
// Tool mix, output sizes and thinking sizes follow that file.
// file-history-snapshot every 10 turns (messageId = the next prompt's uuid),
// system/local_command every 25, queue-operation pairs every 15, a summary at
// the end whose leafUuid is the leaf. A compaction is a compact_boundary root
// (logicalParentUuid = the old tip) followed by the isCompactSummary user
// record; the next prompt hangs off that record. A rewind writes a dead
// branch (prompt, round, reply) and then continues from the same parent.
// Inline sidechains (Options.Sidechains) sit between a Task tool_use and its
// result, with isSidechain:true and their own root.
//
// Walking parentUuid from the last record with a uuid reaches every prompt
// of the current branch: all prompts after the last compaction and not on a
// dead branch (Manifest.ActivePrompts), unless a dangling-parent defect cuts
// the chain.
//
// # 2.1.x additions
//
// Any "2.1.x" Version adds sourceToolAssistantUUID on tool results,
// turn_duration at the end of each turn and the 2.1.39 prompt fields. From
// 2.1.226 on (e.g. "2.1.330") each turn also gets promptId, entrypoint and
// origin on the prompt, effort on assistant lines, and the per-turn records
// docs/transcript-format.md ("A resume only appends") names as the new bulk.
// Their shapes are inferred (no sample file is available); the assumptions
// are:
//
//   - attachment records are chain records like user/assistant ones
//     (parentUuid, uuid, envelope fields) with the payload in
//     "attachment":{"type":…}; before each prompt: environment and date
//     (plus skill_listing ~14 KB and deferred_tools_delta on the first turn
//     and after a compaction), rendered as {"type","content","renderedRole":
//     "system"}; after each prompt one prompt_snapshot
//     {"type":"prompt_snapshot","model","systemPrompt"(65–140 KB),"hash"};
//   - "api-request-shape" and "api-request-blob" are not chain records: no
//     uuid, no parentUuid (checked against a session the real 2.1.330
//     client wrote), one of each per turn after the prompt snapshot: the
//     shape {sessionId, shapeHash, timestamp, version, shape:{model,
//     max_tokens, stream, thinking, tools[12 × {name, description}],
//     messages}} (38–76 KB), the blob {sessionId, hash, message:{…}}
//     (12–93 KB of base64);
//   - "last-prompt" is a metadata record without uuid, one per turn.
//
// # Defects
//
// Options.Defects plants damage at deterministic positions spread over the
// run (see the Defect constants for exactly what each one writes). A
// dangling parent is written 30 s after the record before it, so Claude Code
// 2.1.330's 5 s bridging (docs/transcript-format.md, "A missing parent
// loses history silently") does not mend it.
// Options.InFlight ends the file after an unanswered tool_use.
//
// The same option plants the client shapes (ClientShapes: parallel-fork,
// unterminated-last-record, midway-root): linkings and file ends that real
// Claude Code files hold and that the client itself writes and resumes, so
// a repair must keep them working rather than "fix" them. They are not in
// AllDefects.
package synth
