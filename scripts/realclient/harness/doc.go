// Package harness drives the real Claude Code client offline, so that
// ccm's tests can see what the client does with a transcript or a hook:
// which request it sends when it resumes a session, and which hook outputs
// it accepts and passes on to the model.
//
// It installs the pinned client (PinnedVersion, from the npm registry) into
// a cache folder once, serves a mock Messages API on 127.0.0.1 (Mock), runs
// the client in a fresh sandbox with a clean environment (Box, RunClient),
// and checks what it captured: Validate holds our reading of the Messages
// API rules, ParseDebugLog reads hook runs out of the client's debug log.
// Resume and Session are the two drivers; scripts/realclient is their CLI.
//
// Everything here is specific to the pinned version: the debug-log lines
// and the shape of the requests are those of Claude Code 2.1.330.
package harness
