package hooklib

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"ccm/ccm"
	"ccm/ccm/pins"
	"ccm/hooklib/capture"
	"ccm/internal/fsutil"
)

// storeWait bounds how long a capture waits for the store lock (a prune
// holds it exclusively); past it the output goes through uncaptured.
const storeWait = 2 * time.Second

// onPostToolUse records a failed call's lesson (an MCP tool's error
// result) and captures a large output into the CCM store, answering with
// the preview and stub in the tool's own shape. Anything that goes wrong
// leaves the output as it was: the model then reads the original.
func onPostToolUse(ctx context.Context, h *Hook) (Response, error) {
	h.recordFailure(ctx)
	if !h.Config.Bool("CCM_CAPTURE_ENABLED") {
		return Response{}, nil
	}
	call := capture.Call{Tool: h.In.ToolName(), Input: h.In.ToolInput(), Response: h.In.ToolResponse(), AgentID: h.In.AgentID(),
		TranscriptPath: h.In.TranscriptPath()}
	cp, why := capture.Decide(call, h.thresholds())
	if cp == nil {
		if why != capture.SkipSmall && why != capture.SkipUnknown {
			h.Log.Printf("capture: %s passed through: %s", call.Tool, why)
		}
		return Response{}, nil
	}
	out, err := h.capture(ctx, cp)
	if err != nil {
		h.Log.Printf("capture: %s output of %d bytes passed through: %v", cp.Tool, len(cp.Content), err)
		return Response{}, nil
	}
	return Response{ToolOutput: out}, nil
}

func (h *Hook) thresholds() capture.Thresholds {
	c := h.Config
	return capture.Thresholds{Bash: c.Int("BASH_THRESHOLD"), Glob: c.Int("GLOB_THRESHOLD"),
		Grep: c.Int("GREP_THRESHOLD"), Read: c.Int("READ_THRESHOLD"), Other: c.Int("CCM_CAPTURE_THRESHOLD")}
}

// capture stores the output durably and returns the replacement. The
// store's Put is atomic and fsynced before the replacement is returned:
// the model never gets a stub whose content could be lost.
func (h *Hook) capture(ctx context.Context, cp *capture.Capture) ([]byte, error) {
	st, err := ccm.Open(h.Config.Path("CCM_CACHE_DIR"))
	if err != nil {
		return nil, err
	}
	st.LockWait = storeWait
	sid := h.In.SessionID()
	pin := h.capturePin(sid)
	src := ccm.Source{ToolName: cp.Tool, SessionPath: h.In.TranscriptPath(), FilePath: cp.File,
		Command: cp.Command, Pattern: cp.Pattern, Cwd: h.In.Cwd()}
	key, err := st.Put(ctx, cp.Content, src, pin, pinReason(pin))
	if err != nil {
		return nil, err
	}
	out, err := cp.Replace(capture.Stored{Key: key, Pin: pin, Lines: capture.Lines(cp.Content)})
	if err != nil {
		return nil, err
	}
	if sid != "" {
		if _, err := h.State.Update(ctx, sid, h.Now, func(s *State) error {
			s.LastCapture, s.PinNext = string(key), ""
			return nil
		}); err != nil {
			h.Log.Printf("capture: state: %v", err)
		}
	}
	h.logCapture(cp, key, len(out))
	return out, nil
}

// capturePin is the pin of a new capture: the configured default, raised
// by a pending `ccm:pin next` or an open `ccm:pin start` of the session.
func (h *Hook) capturePin(sid string) ccm.PinLevel {
	pin, _ := ccm.ParsePinLevel(h.Config.PinDefault("CCM_CAPTURE_PIN_DEFAULT"))
	if sid == "" {
		return pin
	}
	s, err := h.State.Load(sid)
	if err != nil {
		return pin
	}
	for _, l := range []string{s.PinNext, s.PinRange} {
		if p, err := ccm.ParsePinLevel(l); err == nil && p > pin {
			pin = p
		}
	}
	return pin
}

func pinReason(p ccm.PinLevel) string {
	if p == ccm.PinNone {
		return ""
	}
	return "captured by the PostToolUse hook"
}

// CaptureRecord is one line of <ccm home>/captures.jsonl, which
// `ccm capture stats` sums up.
type CaptureRecord struct {
	Time    time.Time `json:"ts"`
	Project string    `json:"project"`
	Session string    `json:"session,omitempty"`
	Tool    string    `json:"tool"`
	Pattern string    `json:"pattern"`
	Key     string    `json:"key"`
	Bytes   int       `json:"bytes"` // the captured output
	Shown   int       `json:"shown"` // the replacement the model got
}

// CaptureLog returns the capture log's path.
func CaptureLog(home string) string { return filepath.Join(home, "captures.jsonl") }

// maxCaptureLog caps the capture log; past it the log moves to
// captures.jsonl.1 (one generation kept), like hooks.log.
const maxCaptureLog = 4 << 20

// logCapture appends the capture's record (one O_APPEND write: parallel
// hooks never interleave). Failures are logged only.
func (h *Hook) logCapture(cp *capture.Capture, key ccm.Key, shown int) {
	rec := CaptureRecord{Time: h.Now.UTC(), Project: h.project(), Session: h.In.SessionID(), Tool: cp.Tool,
		Pattern: cp.Stat, Key: string(key), Bytes: len(cp.Content), Shown: shown}
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	path := CaptureLog(h.Config.Home)
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxCaptureLog {
		os.Rename(path, path+".1")
	}
	f, err := fsutil.CreatePrivateAppend(path)
	if err != nil {
		h.Log.Printf("capture log: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		h.Log.Printf("capture log: %v", err)
	}
}

// project is the session's project directory: $CLAUDE_PROJECT_DIR, else
// the input's cwd.
func (h *Hook) project() string {
	if p, ok := h.Lookup("CLAUDE_PROJECT_DIR"); ok && p != "" {
		return p
	}
	return h.In.Cwd()
}

// pinDirectives applies the `ccm:pin` directives of a prompt to captures:
// last pins the session's latest capture now, next the next one, start
// every capture until end (the purge's rules, applied as the session runs).
func (h *Hook) pinDirectives(ctx context.Context, sid string) {
	ds := pins.Parse(h.In.Prompt())
	if len(ds) == 0 {
		return
	}
	var last string
	_, err := h.State.Update(ctx, sid, h.Now, func(s *State) error {
		for _, d := range ds {
			switch d.Kind {
			case "last":
				last = s.LastCapture
			case "next":
				s.PinNext = d.Level.String()
			case "start":
				s.PinRange = d.Level.String()
			case "end":
				s.PinRange = ""
			}
		}
		return nil
	})
	if err != nil {
		h.Log.Printf("pin: state: %v", err)
		return
	}
	if last == "" {
		return
	}
	k, err := ccm.ParseKey(last)
	if err == nil {
		var st *ccm.Store
		if st, err = ccm.Open(h.Config.Path("CCM_CACHE_DIR")); err == nil {
			st.LockWait = storeWait
			lvl := ccm.PinSoft
			for _, d := range ds {
				if d.Kind == "last" {
					lvl = d.Level
				}
			}
			if m, serr := st.Stat(k); serr == nil && m.Pinned.Level > lvl {
				return // a pin only ever rises here
			}
			_, err = st.SetPin(ctx, k, lvl, "ccm:pin last")
		}
	}
	if err != nil {
		h.Log.Printf("pin last: %v", err)
	}
}
