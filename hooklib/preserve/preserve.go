// Package preserve builds the block that carries a session's working state
// across Claude Code's compaction: open tasks, files modified, tests and
// their last result, key decisions, recent errors, the git diff of the
// session's directory, cold-task summaries and the user's own compact
// instructions. The PreCompact hook builds and saves it (PreCompact cannot
// inject context: the client rejects hookSpecificOutput there); the
// SessionStart hook with source "compact", which runs right after the
// compaction, injects it.
//
// Only the part of the transcript after its last compact boundary is read
// (what came before is already in the previous summary), and at most
// Window bytes of it, streaming: the hook costs the same on any file size.
package preserve

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript"
	"ccm/transcript/worklog"
)

// Window bounds how much of the transcript's end is read.
const Window = 32 << 20

// Options are the inputs of one block.
type Options struct {
	Transcript string
	Cwd        string
	Trigger    string // manual or auto
	// Focus is the user's /compact text (PreCompact's custom_instructions).
	Focus string
	// InstructionFiles are compact-instructions.txt files, read if present.
	InstructionFiles []string
	// Cold are the session's cold-task summaries, rendered.
	Cold []string
	// Budget is the block's size limit in characters.
	Budget int
	// GitTimeout bounds git diff --stat (default 3 s).
	GitTimeout time.Duration
	// Size measures text as the hook output counts it (len when nil).
	Size func(string) int
}

// Stats say what a block holds, for the user's message and the log.
type Stats struct {
	OpenTasks, Files, Tests, Decisions, Errors, Cold int
	Git                                              bool
	ReadFrom, ReadTo                                 int64
	GitNote                                          string // why the diff is missing
}

// Region returns the byte range of path a block is built from: from the
// last compact boundary (or Window before the end) to the end.
func Region(f *os.File) (start, end int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("%s is not a regular file", f.Name())
	}
	end = fi.Size()
	tf, err := transcript.ReadTail(f, end, Window, true)
	if err != nil && !errors.Is(err, transcript.ErrTailLimit) {
		return 0, 0, err
	}
	switch {
	case tf.Boundary >= 0:
		start = tf.Boundary
	case end > Window:
		start = end - Window // the first, partial line is skipped as invalid
	}
	return start, end, nil
}

// Gather runs the shared extractor over the region of the transcript:
// from its last compact boundary (or Window before its end) to its end;
// without taskDetail, it skips what only cold-task summaries read
// (worklog.Facts.NoTaskDetail).
// The last Window bytes are mapped into memory (filemap), the boundary is
// found from the end and the records after it are read from the same
// bytes: nothing is read twice or copied, and no buffer is allocated for
// lines (in a hook process, whose memory is all new, touching fresh
// buffers cost more than reading the lines).
func Gather(path string, taskDetail bool) (*worklog.Facts, int64, int64, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, 0, fmt.Errorf("%s is not a regular file", f.Name())
	}
	end := fi.Size()
	from := max(0, end-Window)
	rg, err := fsutil.MapRegion(f, from, end-from)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rg.Close()
	start := from // past Window, the first, partial line is skipped as invalid
	facts := worklog.New()
	facts.NoTaskDetail = !taskDetail
	err = fsutil.GuardMapped(func() error {
		if tf := transcript.ReadTailBytes(rg.Data, from, true); tf.Boundary >= 0 {
			start = tf.Boundary
		}
		rd := transcript.NewReaderBytes(rg.Data[start-from:])
		rd.Structural = true // four times as fast; still refuses torn lines
		return facts.AddAll(rd)
	})
	return facts, start, end, err
}

// Build gathers the facts and renders the block. An empty string means
// there was nothing worth preserving.
func Build(o Options) (string, Stats, error) {
	// git, when it runs, runs while the transcript is read.
	gitDiff := StartGitDiffStat(o.Cwd, o.GitTimeout)
	facts, from, to, err := Gather(o.Transcript, false)
	diff, note := gitDiff()
	if err != nil {
		return "", Stats{}, fmt.Errorf("read transcript: %w", err)
	}
	st := Stats{ReadFrom: from, ReadTo: to}
	st.GitNote = note
	return Render(facts, o, diff, &st), st, nil
}

// readHead reads at most max bytes from the start of a regular file.
func readHead(path string, max int64) ([]byte, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// readInstructions returns the text of the files that exist, each cut to
// 2,000 bytes.
func readInstructions(files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range files {
		data, err := readHead(p, 64<<10)
		if err != nil || len(data) == 0 {
			continue
		}
		s := strings.TrimSpace(string(data))
		if len(s) > 2000 {
			s = worklog.Cut(s, 2000)
		}
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
