package fsutil

import "os"

// LiveDetectEnv names the environment variable that chooses how ccm tells
// whether a process is writing a file. Set to "portable", ccm uses only
// what every system shows, a file's size and modification time watched
// over a short settle wait, and never asks the OS which processes hold a
// file open (Writers) or run Claude Code (ClaudeProcesses), as on a
// system that cannot tell. The Linux tests set it to run the path macOS
// and Windows may take; anything else, or unset, uses what the OS offers.
const LiveDetectEnv = "CCM_LIVE_DETECT"

// PortableDetect reports whether CCM_LIVE_DETECT=portable is set. It is
// read on every call, so a test can switch it.
func PortableDetect() bool { return os.Getenv(LiveDetectEnv) == "portable" }

// LiveWriters is Writers as ccm's live detection uses it: the other
// processes that have the file at path open for writing, with ok false
// where the OS cannot tell or CCM_LIVE_DETECT=portable.
func LiveWriters(path string, fi os.FileInfo) (pids []int, ok bool) {
	if PortableDetect() {
		return nil, false
	}
	return Writers(path, fi)
}

// LiveClaudeProcesses is ClaudeProcesses under the same switch: ok is
// false where the OS cannot tell or CCM_LIVE_DETECT=portable.
func LiveClaudeProcesses() (procs []Process, ok bool) {
	if PortableDetect() {
		return nil, false
	}
	return ClaudeProcesses()
}

// LiveOpenForWriting is OpenForWritingUnder under the same switch: one
// look at every process for the files under roots that another process
// holds open for writing, with ok false where the OS cannot tell or
// CCM_LIVE_DETECT=portable.
func LiveOpenForWriting(roots []string) (files map[FileID][]int, ok bool) {
	if PortableDetect() {
		return nil, false
	}
	return OpenForWritingUnder(roots)
}
