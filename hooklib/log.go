package hooklib

import (
	"fmt"
	"os"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// maxLogSize caps hooks.log; past it the log moves to hooks.log.1 (one
// generation kept), so the log never grows without bound.
const maxLogSize = 1 << 20

// Logger appends one line per message to the hook log. It never fails the
// hook: a log that cannot be written is given up on silently.
type Logger struct {
	path    string
	enabled bool
	event   string
	session string
	now     func() time.Time
}

// NewLogger returns a Logger for cfg's log file.
func NewLogger(cfg *Config, now func() time.Time) *Logger {
	return &Logger{path: cfg.Path("CLAUDE_HOOK_LOG_FILE"), enabled: cfg.Bool("CLAUDE_HOOK_LOG_ENABLED"), now: now}
}

// SetContext sets the event and session every line names.
func (l *Logger) SetContext(event, session string) {
	l.event, l.session = event, session
}

// Printf logs one line: time, event, session, message. Newlines in the
// message are flattened so one call is one line.
func (l *Logger) Printf(format string, args ...any) {
	if l == nil || !l.enabled || l.path == "" {
		return
	}
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	ev, sid := l.event, l.session
	if ev == "" {
		ev = "-"
	}
	if sid == "" {
		sid = "-"
	}
	line := fmt.Sprintf("%s %s %s %s\n", l.now().UTC().Format(time.RFC3339), ev, sid, msg)
	if fi, err := os.Stat(l.path); err == nil && fi.Size() > maxLogSize {
		os.Rename(l.path, l.path+".1") // two racing hooks may both rotate: a few lines lost, no harm
	}
	f, err := fsutil.CreatePrivateAppend(l.path)
	if err != nil {
		return
	}
	f.WriteString(line) // one write with O_APPEND: lines of parallel hooks do not interleave
	f.Close()
}
