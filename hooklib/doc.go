// Package hooklib is the runtime behind `ccm hook <event>`: one entry point
// for every Claude Code hook event. It reads the event's JSON from stdin,
// runs ccm's features for that event (context refresh, effort policy, the
// capture of large tool outputs in capture/, the tool memory in memory/) and
// answers in the one shape Claude Code accepts for the event: additionalContext
// inside hookSpecificOutput on SessionStart, UserPromptSubmit, PreToolUse and
// PostToolUse, nothing on SessionEnd, nothing on Stop unless a feature means
// to make Claude continue. Every answer, framing included, stays within the
// 10,000-character hook output cap. On PostToolUse the answer may instead
// replace the tool's output (updatedToolOutput, in the tool's own shape).
//
// A hook must never break the user's session. Internal errors, panics, bad
// input and unknown events end in exit status 0, no output, and one line in
// <ccm home>/logs/hooks.log. CCM_HOOKS_DISABLED=1 (or the earlier tools'
// CLAUDE_HOOKS_PASSTHROUGH=1) turns every hook into a no-op.
//
// Per-session state lives in <ccm home>/state/, updated under flock with an
// atomic replace, because Claude Code runs matching hooks and parallel tool
// calls' hooks at the same time. Configuration comes from the environment
// and <ccm home>/config.env, with the earlier tools' variable names and
// defaults.
//
// The hook path is kept lean: nothing heavy is initialised at start-up, and
// the tokenizer is loaded only when a refresh has to compress text that is
// not in the compression cache.
package hooklib
