package hooklib

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"ccm/hooklib/capture"
	"ccm/internal/rawjson"
)

// MaxInput bounds what a hook reads from stdin. Events ccm handles carry a
// prompt or a tool's input; 16 MiB leaves room for large tool responses
// without letting a runaway payload exhaust memory.
const MaxInput = 16 << 20

// maxReadFile bounds a file a hook reads whole (state, config, the tool
// memory, a saved compaction state): larger is not one of ccm's, and
// reading it would only cost the session time.
const maxReadFile = 64 << 20

// Input errors. A hook that gets one stays silent and logs it.
var (
	ErrEmptyInput    = errors.New("empty stdin")
	ErrInputTooLarge = errors.New("stdin larger than " + strconv.Itoa(MaxInput) + " bytes") // not fmt: init runs in every hook
	ErrNotObject     = errors.New("stdin is not a JSON object")
)

// Input is the JSON object Claude Code writes to a hook's stdin. Fields are
// read on demand with gjson; nothing is decoded that is not used.
type Input struct {
	raw []byte
	// The tool fields, parsed once: each gjson lookup scans the input,
	// which holds the whole tool output on PostToolUse (up to MaxInput).
	toolInput, toolResponse *gjson.Result
}

// ReadInput reads one JSON object of at most limit bytes (MaxInput if limit
// <= 0).
func ReadInput(r io.Reader, limit int64) (*Input, error) {
	if limit <= 0 {
		limit = MaxInput
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(data)) > limit {
		// Drain the rest so Claude Code's write does not fail, then give up.
		io.Copy(io.Discard, r)
		return nil, ErrInputTooLarge
	}
	return ParseInput(data)
}

// InputWait bounds how long a hook waits for its input. Claude Code writes
// the whole object at once; a writer that never finishes (stdin left open,
// an endless stream) must not keep the hook, and the session, waiting.
const InputWait = 3 * time.Second

// drainLimit bounds what is read and thrown away after an oversized
// input, so that an endless stream (< /dev/zero) cannot keep the hook busy.
const drainLimit = 256 << 20

// ErrInputTimeout is returned when no complete object arrived in time.
var ErrInputTimeout = errors.New("stdin not complete in time")

// ReadInputWithin reads like ReadInput but returns as soon as a complete
// JSON object has arrived, even if stdin stays open, and gives up after
// wait. An oversized input is drained up to drainLimit bytes or the rest
// of wait, never forever.
func ReadInputWithin(r io.Reader, limit int64, wait time.Duration) (*Input, error) {
	if limit <= 0 {
		limit = MaxInput
	}
	type result struct {
		in  *Input
		err error
	}
	done := make(chan result, 1)
	deadline := time.Now().Add(wait)
	go func() {
		in, err := readObject(r, limit, deadline)
		done <- result{in, err}
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case res := <-done:
		return res.in, res.err
	case <-t.C:
		return nil, ErrInputTimeout // the reader stays blocked; the process ends soon
	}
}

// readObject reads until EOF, or until what was read ends in '}' and is a
// valid JSON object.
func readObject(r io.Reader, limit int64, deadline time.Time) (*Input, error) {
	buf := make([]byte, 0, 256<<10)
	for {
		if len(buf) == cap(buf) {
			// Grow fourfold: a 1 MB tool output is copied once, not four times.
			buf = append(make([]byte, 0, 4*cap(buf)), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			drained := int64(0)
			for drained < drainLimit && time.Now().Before(deadline) {
				m, err := r.Read(buf[:cap(buf)])
				drained += int64(m)
				if err != nil {
					break
				}
			}
			return nil, ErrInputTooLarge
		}
		if err == io.EOF {
			return ParseInput(buf)
		}
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		if n > 0 && endsObject(buf) {
			if in, err := ParseInput(buf); err == nil {
				return in, nil
			}
		}
	}
}

// endsObject reports whether data's last non-space byte closes an object.
func endsObject(data []byte) bool {
	for i := len(data) - 1; i >= 0; i-- {
		switch data[i] {
		case ' ', '\n', '\r', '\t':
			continue
		case '}':
			return true
		}
		return false
	}
	return false
}

// ParseInput checks that data is one JSON object and wraps it.
func ParseInput(data []byte) (*Input, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, ErrEmptyInput
	}
	if trimmed[0] != '{' || !gjson.ValidBytes(trimmed) {
		return nil, ErrNotObject
	}
	return &Input{raw: trimmed}, nil
}

// Raw returns the input as read.
func (in *Input) Raw() []byte { return in.raw }

// Get returns the value at a gjson path.
func (in *Input) Get(path string) gjson.Result { return gjson.GetBytes(in.raw, path) }

func (in *Input) str(path string) string { return gjson.GetBytes(in.raw, path).String() }

// The documented stdin fields (docs/hooks-protocol.md, "Input"). Field names
// are the ones Claude Code sends: tool_response, not tool_output (which
// agentihooks read); cwd at the top level, not session.cwd (which
// claude-context-manager read).

// SessionID is session_id.
func (in *Input) SessionID() string { return in.str("session_id") }

// TranscriptPath is transcript_path.
func (in *Input) TranscriptPath() string { return in.str("transcript_path") }

// Cwd is the top-level cwd.
func (in *Input) Cwd() string { return in.str("cwd") }

// Event is hook_event_name.
func (in *Input) Event() string { return in.str("hook_event_name") }

// PermissionMode is permission_mode.
func (in *Input) PermissionMode() string { return in.str("permission_mode") }

// Prompt is UserPromptSubmit's prompt.
func (in *Input) Prompt() string { return in.str("prompt") }

// ToolName is tool_name.
func (in *Input) ToolName() string { return in.str("tool_name") }

// ToolInput is tool_input, as raw JSON.
func (in *Input) ToolInput() gjson.Result {
	if in.toolInput == nil {
		r := in.Get("tool_input")
		in.toolInput = &r
	}
	return *in.toolInput
}

// ToolResponse is PostToolUse's tool_response, as raw JSON. It is found
// with capture.Member, which jumps over the tool's output instead of
// walking it byte by byte as a gjson lookup does.
func (in *Input) ToolResponse() gjson.Result {
	if in.toolResponse == nil {
		r := gjson.Result{}
		if v, off, ok := capture.Member(in.rawString(), "tool_response"); ok {
			r = gjson.Parse(v) // v starts with the value: Parse reads only its type
			r.Index = off
		}
		in.toolResponse = &r
	}
	return *in.toolResponse
}

// rawString is the input as a string without a copy: the bytes are never
// changed once read (a hook input reaches MaxInput).
func (in *Input) rawString() string {
	return rawjson.String(in.raw)
}

// ToolUseID is tool_use_id.
func (in *Input) ToolUseID() string { return in.str("tool_use_id") }

// Source is SessionStart's source: startup, resume, clear, compact, fork.
func (in *Input) Source() string { return in.str("source") }

// Trigger is PreCompact's and PostCompact's trigger: manual or auto.
func (in *Input) Trigger() string { return in.str("trigger") }

// CustomInstructions is PreCompact's custom_instructions (the /compact text).
func (in *Input) CustomInstructions() string { return in.str("custom_instructions") }

// AgentID is agent_id, set inside subagents.
func (in *Input) AgentID() string { return in.str("agent_id") }

// AgentType is agent_type.
func (in *Input) AgentType() string { return in.str("agent_type") }

// StopHookActive is Stop's and SubagentStop's stop_hook_active.
func (in *Input) StopHookActive() bool { return in.Get("stop_hook_active").Bool() }

// Reason is SessionEnd's reason.
func (in *Input) Reason() string { return in.str("reason") }
