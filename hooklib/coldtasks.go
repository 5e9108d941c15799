package hooklib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"ccm/hooklib/coldtask"
	"ccm/hooklib/preserve"
	"ccm/internal/fsutil"
	"ccm/transcript"
)

func init() {
	also(PostToolUse, coldTasksCheck)
}

// coldTaskTools are the tools whose PostToolUse runs the check
// (claude-agentic-framework's Bash|Write|Edit, and the tools that complete
// tasks); the other tools of the PostToolUse matcher are the capture's.
var coldTaskTools = []string{"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "TaskUpdate", "TodoWrite"}

// coldTurnLimit bounds one incremental read of the turn counter.
const coldTurnLimit = 32 << 20

// ColdState counts a session's assistant turns from the transcript,
// incrementally, so that the cold-task check runs every CHECK_FREQUENCY
// turns without reading the transcript the other times.
type ColdState struct {
	// Offset is how far the transcript was read; Turns the assistant
	// messages counted up to there; LastMsg the last one's id.
	Offset  int64  `json:"offset,omitempty"`
	Turns   int    `json:"turns,omitempty"`
	LastMsg string `json:"last_msg,omitempty"`
	Started bool   `json:"started,omitempty"`
	// Path is the transcript the offset is into: another file (a fork, a
	// copy) starts the count over.
	Path string `json:"path,omitempty"`
	// Checked is the turn of the last check.
	Checked int `json:"checked,omitempty"`
}

// coldTasksCheck runs after the tools that finish work. Only when the fill
// is at least CONTEXT_THRESHOLD and CHECK_FREQUENCY turns have passed since
// the last check does it read the transcript after its last compact
// boundary, and write a summary, once, of each completed task not
// mentioned in the last TURNS_UNTIL_COLD turns. It never answers: the
// summaries wait for the next PreCompact.
func coldTasksCheck(ctx context.Context, h *Hook, _ Response) (Response, error) {
	sid, path := h.In.SessionID(), h.In.TranscriptPath()
	if sid == "" || path == "" || !h.Config.Bool("COLD_TASKS_ENABLED") || !slices.Contains(coldTaskTools, h.In.ToolName()) {
		return Response{}, nil
	}
	fill, err := readFill(h)
	if errors.Is(err, fs.ErrNotExist) {
		return Response{}, nil // not written yet: nothing to check, and the Stop hook logs it
	}
	if err != nil {
		return Response{}, fmt.Errorf("cold tasks: %w", err)
	}
	if !fill.Known || fill.Pct() < float64(h.Config.Int("CONTEXT_THRESHOLD")) {
		return Response{}, nil
	}
	due := false
	_, err = h.State.Update(ctx, sid, h.Now, func(st *State) error {
		if err := countTurns(path, &st.Cold); err != nil {
			return err
		}
		if st.Cold.Checked == 0 || st.Cold.Turns-st.Cold.Checked >= max(h.Config.Int("CHECK_FREQUENCY"), 1) {
			due, st.Cold.Checked = true, max(st.Cold.Turns, 1)
		}
		return nil
	})
	if err != nil {
		return Response{}, fmt.Errorf("cold tasks: %w", err)
	}
	if !due {
		return Response{}, nil
	}
	facts, _, _, err := preserve.Gather(path, true)
	if err != nil {
		return Response{}, fmt.Errorf("cold tasks: %w", err)
	}
	dir := coldtask.Dir(h.Config.Home)
	written, cold := 0, facts.ColdTasks(h.Config.Int("TURNS_UNTIL_COLD"))
	for _, t := range cold {
		ok, err := coldtask.WriteOnce(dir, coldtask.FromTask(sid, t, h.Now))
		if err != nil {
			return Response{}, fmt.Errorf("cold tasks: %w", err)
		}
		if ok {
			written++
		}
	}
	h.Log.Printf("cold tasks: checked at turn %d, fill %.0f%%: %d cold, %d summary(ies) written", facts.Turns, fill.Pct(), len(cold), written)
	return Response{}, nil
}

// countTurns brings the turn counter up to the transcript's end: from the
// last compact boundary on the first read or after a rewrite, then only
// what was appended.
func countTurns(path string, cs *ColdState) error {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if !cs.Started || size < cs.Offset || cs.Path != path {
		start, _, err := preserve.Region(f)
		if err != nil {
			return err
		}
		*cs = ColdState{Offset: start, Started: true, Path: path, Checked: cs.Checked, Turns: cs.Turns}
		cs.Offset = start
	}
	if size-cs.Offset > coldTurnLimit {
		cs.Offset = size - coldTurnLimit // the first, partial line is skipped
	}
	rd := transcript.NewReader(io.NewSectionReader(f, cs.Offset, size-cs.Offset))
	end := cs.Offset
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !l.Terminated {
			break // still being written
		}
		end = cs.Offset + l.Offset + int64(len(l.Raw))
		if l.Kind != transcript.Object {
			continue
		}
		rec := transcript.NewRecord(l.Body())
		if rec.Type() != "assistant" || rec.IsSidechain() {
			continue
		}
		if id := rec.MessageID(); id == "" || id != cs.LastMsg {
			cs.Turns++
			cs.LastMsg = id
		}
	}
	cs.Offset = end
	return nil
}

// coldSummaries returns the session's cold-task summaries, rendered for
// the preservation block.
func (h *Hook) coldSummaries(session string) []string {
	list, bad, err := coldtask.List(coldtask.Dir(h.Config.Home), session)
	if err != nil {
		h.Log.Printf("cold tasks: %v", err)
	}
	if len(bad) > 0 {
		h.Log.Printf("cold tasks: %d unreadable summary file(s) skipped, e.g. %s", len(bad), bad[0])
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = coldtask.Render(s)
	}
	return out
}
