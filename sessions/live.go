package sessions

import (
	"path/filepath"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// Liveness tells live files for a command that looks at many sessions at
// once, by the one live rule (transcript.LiveWindow): a file is live when
// it was written within the window, or when another process holds it open
// for writing. Which files are held open is read once, when the Liveness
// is made (one look at /proc on Linux, one process listing on macOS), not
// once per file; under CCM_LIVE_DETECT=portable, or where the system
// cannot tell, the modification time alone decides.
type Liveness struct {
	now     time.Time
	writers map[fsutil.FileID][]int
}

// NewLiveness looks once for the files under configDir, under the targets
// of its symlinked project folders, and under extra (folders a command
// walks outside the config dir) that other processes hold open for
// writing.
func NewLiveness(configDir string, now time.Time, extra ...string) *Liveness {
	roots := []string{configDir}
	if ps, err := ListProjects(configDir); err == nil {
		for _, p := range ps {
			if p.Linked {
				roots = append(roots, p.Dir)
			}
		}
	}
	for _, d := range extra {
		if abs, err := filepath.Abs(d); err == nil {
			roots = append(roots, abs)
		}
	}
	w, _ := fsutil.LiveOpenForWriting(roots)
	return &Liveness{now: now, writers: w}
}

// Live reports whether f is live and why ("" when not).
func (l *Liveness) Live(f File) string {
	if transcript.RecentlyWritten(f.ModTime, l.now) {
		return transcript.LiveRecentReason
	}
	if pids := l.writers[f.ID]; len(pids) > 0 {
		return transcript.LiveWriterReason
	}
	return ""
}

// Held reports whether another process holds f open for writing (by the
// look the Liveness took when it was made).
func (l *Liveness) Held(f File) bool { return len(l.writers[f.ID]) > 0 }

// LiveAny reports the first live file of a session (transcript, companion
// and legacy files).
func (l *Liveness) LiveAny(s *Session) string {
	if r := l.Live(s.Main); r != "" {
		return r
	}
	for _, fs := range [][]File{s.Companion, s.Legacy} {
		for _, f := range fs {
			if r := l.Live(f); r != "" {
				return r + " (" + filepath.Base(f.Path) + ")"
			}
		}
	}
	return ""
}
