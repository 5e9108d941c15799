// Package worklog extracts a session's working state from its transcript
// in one streaming pass: the user's recent requests, open and finished
// tasks (TaskCreate/TaskUpdate correlated by the id in TaskCreate's
// result, and TodoWrite lists), files modified, commands and test runs
// with their last result, the assistant's key decisions, recent errors,
// and per task what was done while it was open.
//
// One extractor serves every consumer: `ccm purge --inject-compaction`
// renders its summary from it, the PreCompact hook its preservation
// block, and the cold-task check its task summaries. Memory is bounded by
// the longest line plus fixed-size lists; every string kept is a copy.
package worklog
