package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// LiveWindow is how recently a transcript may have been written to and
// still count as live: Claude Code is probably running its session, and
// its next line may come at any moment. Every part of ccm that asks
// whether a session is live uses this one window (a purge, a batch that
// skips live sessions, the listing's state, archive, clean, and the
// rewrite that decides whether the replaced file keeps a name). The rule
// and its exceptions are described in docs/sessions.md.
const LiveWindow = 2 * time.Minute

// LiveRecentReason is the reason a listing gives for a transcript live by
// its modification time alone.
const LiveRecentReason = "written in the last 2 minutes"

// LiveWriterReason is the reason given for a file another process holds
// open for writing.
const LiveWriterReason = "open for writing by another process"

// RecentlyWritten reports whether a file last modified at mtime was
// written within LiveWindow of now. A modification time up to LiveWindow
// ahead counts too (a clock stepped back, a file from a machine whose
// clock runs ahead); one further ahead does not, or it would stay live
// for as long as the skew lasts.
func RecentlyWritten(mtime, now time.Time) bool {
	age := now.Sub(mtime)
	return age < LiveWindow && age > -LiveWindow
}

// HasWriter reports whether the transcript at path (fi describes it) may
// be written to right now: another process holds it open for writing, or
// a Claude Code client runs in its project (its working directory encodes
// to the transcript's folder) or names the session on its command line
// (--resume ID). Claude Code opens the file by path for each line, so its
// process is the sign between two lines. Where the system cannot tell,
// or under CCM_LIVE_DETECT=portable, known is false and writer true, so
// that the modification time alone decides.
//
// It narrows the window rule for a file the user names: a transcript
// just copied or checked out has a new modification time and no writer.
func HasWriter(path string, fi os.FileInfo) (writer, known bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true, true
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	pids, ok := fsutil.LiveWriters(abs, fi)
	if !ok {
		return true, false
	}
	if len(pids) > 0 {
		return true, true
	}
	procs, ok := fsutil.LiveClaudeProcesses()
	if !ok {
		return true, false
	}
	sid := strings.TrimSuffix(filepath.Base(abs), ".jsonl")
	folder := filepath.Base(filepath.Dir(abs))
	for _, p := range procs {
		if p.Cwd != "" && ProjectDirName(p.Cwd) == folder {
			return true, true
		}
		for _, a := range p.Args {
			if a == sid || strings.HasSuffix(a, "/"+sid+".jsonl") {
				return true, true
			}
		}
	}
	return false, true
}
