// Package coldtask keeps the summaries of cold tasks: completed tasks that
// no turn has mentioned for a while, summarised once (files, commands,
// outcomes, errors resolved) while the transcript still holds their
// history, so that the preservation block at the next compaction can carry
// them verbatim instead of the compaction model re-deriving them.
//
// Each summary is one JSON file in claude-agentic-framework's shape and
// layout (docs/earlier-tools.md, "The cold-task summary"):
// <dir>/<md5(session_id:task_id)>.json, where dir is <ccm
// home>/compressed_context.
package coldtask

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript/worklog"
)

// Summary is one cold task's summary, in claude-agentic-framework's JSON shape.
type Summary struct {
	SessionID      string   `json:"session_id"`
	TaskID         string   `json:"task_id"`
	Subject        string   `json:"subject"`
	StartTurn      int      `json:"start_turn"`
	EndTurn        int      `json:"end_turn"`
	CompressedAt   string   `json:"compressed_at"`
	FilesModified  []string `json:"files_modified"`
	CommandsRun    []string `json:"commands_run"`
	KeyOutcomes    []string `json:"key_outcomes"`
	ErrorsResolved []string `json:"errors_resolved"`
}

// TimeLayout is compressed_at's format (claude-agentic-framework's isoformat).
const TimeLayout = "2006-01-02T15:04:05"

// Dir is where the summaries live under ccm's home.
func Dir(home string) string { return filepath.Join(home, "compressed_context") }

// Path is the file of one session's task.
func Path(dir, session, task string) string {
	sum := md5.Sum([]byte(session + ":" + task))
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".json")
}

// FromTask builds the summary of a worklog task.
func FromTask(session string, t *worklog.Task, now time.Time) Summary {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return Summary{SessionID: session, TaskID: t.ID, Subject: t.Subject, StartTurn: t.StartTurn, EndTurn: t.EndTurn,
		CompressedAt: now.UTC().Format(TimeLayout), FilesModified: nonNil(t.Files), CommandsRun: nonNil(t.Commands),
		KeyOutcomes: nonNil(t.Outcomes), ErrorsResolved: nonNil(t.Errors)}
}

// WriteOnce saves s unless its file exists already (a summary is written
// once: the task's history is gone after a compaction, so a later pass
// could only make it worse). It reports whether it wrote.
func WriteOnce(dir string, s Summary) (bool, error) {
	p := Path(dir, s.SessionID, s.TaskID)
	if _, err := os.Stat(p); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return false, err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return false, err
	}
	return true, fsutil.WriteFileBytes(p, fsutil.FileMode, append(data, '\n'))
}

// maxSummary bounds a summary file read back; one is a few kilobytes.
const maxSummary = 1 << 20

// List reads the summaries in dir, of one session when session is not
// "", oldest task first (by session, then end turn). Files that do not
// parse are skipped and named in bad.
func List(dir, session string) (out []Summary, bad []string, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := fsutil.ReadRegular(p, maxSummary)
		if err != nil {
			bad = append(bad, p)
			continue
		}
		var s Summary
		if err := json.Unmarshal(data, &s); err != nil || s.SessionID == "" || s.TaskID == "" {
			bad = append(bad, p)
			continue
		}
		if session == "" || s.SessionID == session {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SessionID != out[j].SessionID {
			return out[i].SessionID < out[j].SessionID
		}
		if out[i].EndTurn != out[j].EndTurn {
			return out[i].EndTurn < out[j].EndTurn
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out, bad, nil
}

// Render is a summary as the preservation block carries it (the earlier
// tool's "PRE-COMPUTED TASK SUMMARIES" entry, with commands and errors).
func Render(s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "▸ Task: %s (completed at turn %d)", s.Subject, s.EndTurn)
	if len(s.FilesModified) > 0 {
		fmt.Fprintf(&b, "\n  Files: %s", strings.Join(s.FilesModified, ", "))
	}
	if len(s.CommandsRun) > 0 {
		fmt.Fprintf(&b, "\n  Commands: %s", strings.Join(s.CommandsRun, "; "))
	}
	for _, o := range s.KeyOutcomes {
		fmt.Fprintf(&b, "\n  → %s", o)
	}
	for _, e := range s.ErrorsResolved {
		fmt.Fprintf(&b, "\n  ✗ resolved: %s", e)
	}
	return b.String()
}
