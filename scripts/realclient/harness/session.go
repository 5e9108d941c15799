package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// SessionOptions says how to run a scripted session.
type SessionOptions struct {
	Client   string // the client binary (see Install)
	Settings string // settings file with the hooks; {{OUT}} and {{PROJECT}} are substituted
	Script   string // steps for the mock (see Step); "" is DefaultScript
	Prompt   string
	// AllowedTools goes to --allowedTools: the client refuses
	// --dangerously-skip-permissions as root, so tools are allowed by name.
	AllowedTools string
	Resume       string // a transcript to resume instead of starting fresh
	Scope        string // where the settings go: user (default), project, local, flag
	Marker       string // regexp whose matches are tracked into requests and the transcript
	Out          string
	Timeout      time.Duration
	Extra        []string // more client arguments
}

// DefaultScript runs Bash `echo hello`, reads {{PROJECT}}/notes.txt, and
// ends the turn.
const DefaultScript = `[
 {"content": [{"type": "text", "text": "Running a command."},
   {"type": "tool_use", "name": "Bash", "input": {"command": "echo hello", "description": "Say hello"}}]},
 {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "{{PROJECT}}/notes.txt"}}]},
 {"content": [{"type": "text", "text": "Done: said hello and read the notes."}]}
]`

// DefaultMarker matches the markers of a test hook: CCM-MARKER <Event> <mode>.
const DefaultMarker = `CCM-MARKER [A-Za-z]+ [a-z0-9]+`

// SessionReport is report.json of a scripted session.
type SessionReport struct {
	Verdict           string              `json:"verdict"` // OK, FAILED or NOT_DRIVEN
	Reason            string              `json:"reason,omitempty"`
	Claude            string              `json:"claude"`
	ClaudeVersion     string              `json:"claude_version"`
	ClaudeRC          int                 `json:"claude_rc"`
	TimedOut          bool                `json:"timed_out"`
	Out               string              `json:"out"`
	Settings          string              `json:"settings"`
	Result            json.RawMessage     `json:"result"`
	MainRequests      int                 `json:"main_requests"`
	ScriptStepsLeft   int                 `json:"script_steps_left"`
	Requests          []RequestRef        `json:"requests"`
	TranscriptRecords map[string]int      `json:"transcript_records,omitempty"`
	TranscriptMarkers []string            `json:"transcript_markers"`
	Delivered         map[string]Delivery `json:"delivered"`
	HooksLogEvents    map[string]int      `json:"hooks_log_events,omitempty"`
	HookLog                               // hook_runs, context_accepted, hook_errors
}

// Delivery is the first place a hook's text reached the model: the main
// request, the message index and its role, and how the client labelled it
// ("additional context", "success", "blocking error", ...; markers have none).
type Delivery struct {
	RequestSeq int    `json:"request_seq"`
	Message    int    `json:"message"`
	Role       string `json:"role"`
	How        string `json:"how,omitempty"`
}

// ExitCode is the CLI's exit status: 0 the session ran with no hook error,
// 1 a hook errored or was rejected, the client failed or the model was
// never called, 2 not driven.
func (r *SessionReport) ExitCode() int {
	switch r.Verdict {
	case "OK":
		return 0
	case "FAILED":
		return 1
	}
	return 2
}

// deliveredRE is how the client labels hook text it puts in front of the
// model (2.1.330): "<Event>[:<matcher>] hook additional context: ..." for
// JSON additionalContext, "... hook success: ..." for plain stdout, and
// the blocking-error and feedback forms.
var deliveredRE = regexp.MustCompile(`([A-Za-z]+)(?::[A-Za-z0-9_.*|-]+)? hook (additional context|success|blocking error|error|feedback)`)

// hookStderrRE picks hook failures the client prints on stderr.
var hookStderrRE = regexp.MustCompile(`(?i)hook.*(failed|error|blocked)`)

// Session runs one scripted -p session of the client with the hooks of
// the settings file, and reports what the hooks did: their runs and exit
// statuses, accepted and rejected outputs, and where their text reached
// the model. It writes requests/, transcript.jsonl, debug.log,
// stdout.txt, stderr.txt and report.json into the output folder.
func Session(ctx context.Context, o SessionOptions) (*SessionReport, error) {
	if o.Prompt == "" {
		o.Prompt = "Please say hello and read notes.txt."
	}
	if o.AllowedTools == "" {
		o.AllowedTools = "Bash Read Write Edit Glob Grep"
	}
	if o.Timeout <= 0 {
		o.Timeout = 180 * time.Second
	}
	if o.Marker == "" {
		o.Marker = DefaultMarker
	}
	out, err := outDir(o.Out, "hook-session-")
	if err != nil {
		return nil, err
	}
	rep := &SessionReport{Verdict: NotDriven, Claude: o.Client, Out: out, ClaudeRC: -1, Requests: []RequestRef{},
		TranscriptMarkers: []string{}, Delivered: map[string]Delivery{},
		HookLog: HookLog{Runs: map[string]map[string]int{}, ContextAccepted: map[string]int{}, Errors: []string{}}}
	if err := session(ctx, o, rep); err != nil {
		rep.Verdict, rep.Reason = NotDriven, err.Error()
	}
	return rep, writeReport(out, rep)
}

func session(ctx context.Context, o SessionOptions, rep *SessionReport) error {
	marker, err := regexp.Compile(o.Marker)
	if err != nil {
		return fmt.Errorf("--marker: %w", err)
	}
	box, err := NewBox(rep.Out)
	if err != nil {
		return err
	}
	rep.Out = box.Out
	values := map[string]string{"OUT": box.Out, "PROJECT": box.Project}
	if err := os.WriteFile(filepath.Join(box.Project, "notes.txt"), []byte("hello from notes.txt\n"), 0o644); err != nil {
		return err
	}
	raw, err := os.ReadFile(o.Settings)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	settings := Substitute(string(raw), values)
	if !json.Valid([]byte(settings)) {
		return fmt.Errorf("settings %s is not valid JSON", o.Settings)
	}
	dest, ok := map[string]string{
		"": filepath.Join(box.Config, "settings.json"), "user": filepath.Join(box.Config, "settings.json"),
		"project": filepath.Join(box.Project, ".claude", "settings.json"),
		"local":   filepath.Join(box.Project, ".claude", "settings.local.json"),
		"flag":    filepath.Join(box.Out, "settings.json"),
	}[o.Scope]
	if !ok {
		return fmt.Errorf("--scope %q: use user, project, local or flag", o.Scope)
	}
	rep.Settings = dest
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dest, []byte(settings), 0o644); err != nil {
		return err
	}
	scriptText := DefaultScript
	if o.Script != "" {
		b, err := os.ReadFile(o.Script)
		if err != nil {
			return fmt.Errorf("script: %w", err)
		}
		scriptText = string(b)
	}
	steps, err := ParseScript([]byte(Substitute(scriptText, values)))
	if err != nil {
		return err
	}
	args := []string{"-p", o.Prompt, "--output-format", "json", "--debug-file", filepath.Join(box.Out, "debug.log"),
		"--allowedTools", o.AllowedTools}
	if o.Scope == "flag" {
		args = append(args, "--settings", dest)
	}
	if o.Resume != "" {
		info, err := analyzeTranscript(o.Resume)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		sid := pickSessionID(o.Resume, info)
		if err := copyFile(o.Resume, filepath.Join(box.ProjectsDir, sid+".jsonl")); err != nil {
			return err
		}
		args = append(args, "--resume", sid)
	}
	args = append(args, o.Extra...)

	rep.ClaudeVersion = Version(ctx, o.Client)
	mock, err := NewMock(steps, filepath.Join(box.Out, "requests"))
	if err != nil {
		return err
	}
	mock.DefaultText = "Mock: nothing more to do."
	if err := mock.Start(); err != nil {
		return err
	}
	res, err := RunClient(ctx, o.Client, args, box.Project, ClientEnviron(box.Home, box.Config, mock.URL(), box.Out), box.Out, o.Timeout)
	mock.Close()
	if err != nil {
		return err
	}
	rep.ClaudeRC, rep.TimedOut = res.ExitCode, res.TimedOut
	stdout, _ := os.ReadFile(filepath.Join(box.Out, "stdout.txt"))
	if s := bytes.TrimSpace(stdout); json.Valid(s) {
		rep.Result = json.RawMessage(s)
	}
	mains := mock.Main()
	rep.MainRequests, rep.ScriptStepsLeft = len(mains), mock.StepsLeft()
	for _, r := range mock.Requests() {
		rep.Requests = append(rep.Requests, RequestRef{r.Seq, r.Path, r.Kind})
	}
	if tx := sessionFile(box, rep.Result); tx != "" {
		if err := copyFile(tx, filepath.Join(box.Out, "transcript.jsonl")); err != nil {
			return err
		}
		rep.TranscriptRecords, rep.TranscriptMarkers = transcriptHookRecords(tx, marker)
	}
	if f, err := os.Open(filepath.Join(box.Out, "debug.log")); err == nil {
		rep.HookLog, err = ParseDebugLog(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	stderr, _ := os.ReadFile(filepath.Join(box.Out, "stderr.txt"))
	for _, l := range strings.Split(string(stderr), "\n") {
		if hookStderrRE.MatchString(l) && len(rep.Errors) < 40 {
			rep.Errors = append(rep.Errors, "stderr: "+cut(l, 400))
		}
	}
	rep.Delivered = delivery(mains, marker)
	rep.HooksLogEvents = hooksLogEvents(filepath.Join(box.Out, "hooks.jsonl"))
	if rep.Result == nil {
		return errors.New(notDrivenReason(box.Out, res, o.Timeout))
	}
	rep.Verdict = "OK"
	if len(rep.Errors) > 0 || rep.ClaudeRC != 0 || rep.MainRequests == 0 {
		rep.Verdict = "FAILED"
	}
	return nil
}

// sessionFile is the transcript the client wrote: the result's session
// id, else the newest session file of the config dir.
func sessionFile(box *Box, result json.RawMessage) string {
	if sid := gjson.GetBytes(result, "session_id").String(); sid != "" {
		p := filepath.Join(box.ProjectsDir, sid+".jsonl")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	cands, _ := filepath.Glob(filepath.Join(box.Config, "projects", "*", "*.jsonl"))
	best, bestTime := "", time.Time{}
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && !fi.ModTime().Before(bestTime) {
			best, bestTime = c, fi.ModTime()
		}
	}
	return best
}
