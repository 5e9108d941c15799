package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Verdicts of a resume check.
const (
	Valid     = "VALID"
	Invalid   = "INVALID"
	NotDriven = "NOT_DRIVEN"
)

// ResumeOptions says what to resume and how.
type ResumeOptions struct {
	Client string // the client binary (see Install)
	// File is a transcript to resume: it is copied byte for byte into a
	// fresh config dir as projects/<encoded project>/<SessionID>.jsonl.
	File string
	// ConfigDir and Cwd, instead of File: resume the session SessionID
	// where it already lives, with CLAUDE_CONFIG_DIR=ConfigDir and the
	// client started in Cwd.
	ConfigDir, Cwd string
	SessionID      string // with File: "" picks the records' sessionId
	Out            string // output folder; "" makes a temporary one
	Model          string // --model for the client; "" lets it choose
	Prompt         string // the prompt sent after the resumed history
	Timeout        time.Duration
}

// ResumeReport is report.json of a resume check.
type ResumeReport struct {
	Verdict       string          `json:"verdict"`
	Reason        string          `json:"reason,omitempty"`
	Problems      []string        `json:"problems"`
	Warnings      []string        `json:"warnings"`
	Stats         Stats           `json:"stats"`
	History       *History        `json:"history,omitempty"`
	Transcript    string          `json:"transcript"`
	SessionID     string          `json:"session_id"`
	Claude        string          `json:"claude"`
	ClaudeVersion string          `json:"claude_version"`
	ClaudeRC      int             `json:"claude_rc"`
	TimedOut      bool            `json:"timed_out"`
	Out           string          `json:"out"`
	FileTypes     map[string]int  `json:"file_types,omitempty"`
	SidechainUA   int             `json:"sidechain_ua_records"`
	ChainBreak    *ChainBreak     `json:"chain_break"`
	FileAfter     *FileAfter      `json:"file_after,omitempty"`
	Result        json.RawMessage `json:"result"`
	Requests      []RequestRef    `json:"requests"`
	MainRequests  int             `json:"main_requests"`
}

// FileAfter says what the client did to the session file.
type FileAfter struct {
	OriginalPrefixIntact bool  `json:"original_prefix_intact"`
	BytesAdded           int64 `json:"bytes_added"`
}

// RequestRef names one request the mock saw.
type RequestRef struct {
	Seq  int    `json:"seq"`
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// ExitCode is the CLI's exit status for the verdict: 0 valid, 1 invalid,
// 2 not driven.
func (r *ResumeReport) ExitCode() int {
	switch r.Verdict {
	case Valid:
		return 0
	case Invalid:
		return 1
	}
	return 2
}

// Resume resumes a transcript in the client (`claude --resume ID -p
// PROMPT`), captures the first main request and validates it. It writes
// request.json (the exact body), report.json, requests/NNN.json,
// debug.log, stdout.txt, stderr.txt and transcript-after.jsonl into the
// output folder. A run that captured no request has the verdict
// NotDriven, with the reason; the error is only for an output folder that
// cannot be written.
func Resume(ctx context.Context, o ResumeOptions) (*ResumeReport, error) {
	if o.Prompt == "" {
		o.Prompt = "ping"
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	out, err := outDir(o.Out, "resume-check-")
	if err != nil {
		return nil, err
	}
	rep := &ResumeReport{Verdict: NotDriven, Problems: []string{}, Warnings: []string{}, Requests: []RequestRef{},
		Transcript: o.File, Claude: o.Client, Out: out, ClaudeRC: -1}
	err = resume(ctx, o, rep)
	if err != nil {
		rep.Verdict, rep.Reason = NotDriven, err.Error()
	}
	return rep, writeReport(out, rep)
}

func resume(ctx context.Context, o ResumeOptions, rep *ResumeReport) error {
	out := rep.Out
	var configDir, home, cwd, session string
	before := "" // the session file's bytes before the run
	var info *transcriptInfo
	if o.ConfigDir == "" {
		if o.File == "" {
			return errors.New("nothing to resume: give a transcript, or --config-dir, --cwd and --session")
		}
		src, err := filepath.Abs(o.File)
		if err != nil {
			return err
		}
		rep.Transcript = src
		if info, err = analyzeTranscript(src); err != nil {
			return fmt.Errorf("read the transcript: %w", err)
		}
		box, err := NewBox(out)
		if err != nil {
			return err
		}
		rep.SessionID = o.SessionID
		if rep.SessionID == "" {
			rep.SessionID = pickSessionID(src, info)
		}
		session = filepath.Join(box.ProjectsDir, rep.SessionID+".jsonl")
		if err := copyFile(src, session); err != nil {
			return fmt.Errorf("place the transcript: %w", err)
		}
		configDir, home, cwd, before = box.Config, box.Home, box.Project, src
	} else {
		if o.Cwd == "" || o.SessionID == "" {
			return errors.New("--config-dir needs --cwd and --session")
		}
		var err error
		if cwd, err = filepath.Abs(o.Cwd); err == nil {
			cwd, err = filepath.EvalSymlinks(cwd)
		}
		if err != nil {
			return fmt.Errorf("working dir: %w", err)
		}
		if configDir, err = filepath.Abs(o.ConfigDir); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(configDir, ".claude.json")); errors.Is(err, os.ErrNotExist) {
			if err := WriteClientState(configDir, cwd); err != nil {
				return err
			}
		}
		home = filepath.Join(out, "home")
		if err := os.MkdirAll(home, 0o755); err != nil {
			return err
		}
		enc, err := EncodeProject(cwd)
		if err != nil {
			return err
		}
		rep.SessionID = o.SessionID
		session = filepath.Join(configDir, "projects", enc, o.SessionID+".jsonl")
		rep.Transcript = session
		if info, err = analyzeTranscript(session); err != nil {
			info = nil // the client will say it finds no such session
		}
	}
	if info != nil {
		rep.FileTypes, rep.SidechainUA, rep.ChainBreak = info.types, info.sidechain, info.chainBreak
	}
	var origSize int64 = -1
	if fi, err := os.Stat(session); err == nil {
		origSize = fi.Size()
	}
	if origSize >= 0 && before == "" {
		before = filepath.Join(out, ".transcript-before")
		if err := copyFile(session, before); err != nil {
			return err
		}
		defer os.Remove(before)
	}

	rep.ClaudeVersion = Version(ctx, o.Client)
	mock, err := NewMock(nil, filepath.Join(out, "requests"))
	if err != nil {
		return err
	}
	if err := mock.Start(); err != nil {
		return err
	}
	args := []string{"--resume", rep.SessionID, "-p", o.Prompt, "--output-format", "json",
		"--debug-file", filepath.Join(out, "debug.log")}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	res, err := RunClient(ctx, o.Client, args, cwd, ClientEnviron(home, configDir, mock.URL(), out), out, o.Timeout)
	mock.Close()
	if err != nil {
		return err
	}
	rep.ClaudeRC, rep.TimedOut = res.ExitCode, res.TimedOut
	stdout, _ := os.ReadFile(filepath.Join(out, "stdout.txt"))
	if json.Valid(bytes.TrimSpace(stdout)) {
		rep.Result = json.RawMessage(bytes.TrimSpace(stdout))
	}
	if _, err := os.Stat(session); err == nil {
		if err := copyFile(session, filepath.Join(out, "transcript-after.jsonl")); err != nil {
			return err
		}
		if origSize >= 0 {
			rep.FileAfter = fileAfter(before, session, origSize)
		}
	}
	for _, r := range mock.Requests() {
		rep.Requests = append(rep.Requests, RequestRef{r.Seq, r.Path, r.Kind})
	}
	mains := mock.Main()
	rep.MainRequests = len(mains)
	if len(mains) == 0 {
		return errors.New(notDrivenReason(out, res, o.Timeout))
	}
	body := mains[0].Body
	if err := os.WriteFile(filepath.Join(out, "request.json"), body, 0o644); err != nil {
		return err
	}
	v := Validate(body, o.Prompt)
	rep.Problems, rep.Warnings, rep.Stats = v.Problems, v.Warnings, v.Stats
	rep.Verdict = Valid
	if !v.Valid() {
		rep.Verdict = Invalid
	}
	if info != nil {
		h := coverage(info, body)
		rep.History = &h
	}
	return nil
}

// notDrivenReason says why the client sent no request: its exit, the end
// of its stderr and of its result.
func notDrivenReason(out string, res RunResult, timeout time.Duration) string {
	how := fmt.Sprintf("exited %d", res.ExitCode)
	if res.TimedOut {
		how = fmt.Sprintf("timed out after %s", timeout)
	}
	stderr, _ := os.ReadFile(filepath.Join(out, "stderr.txt"))
	stdout, _ := os.ReadFile(filepath.Join(out, "stdout.txt"))
	tail := func(b []byte) string {
		s := strings.Join(strings.Fields(string(b)), " ")
		if r := []rune(s); len(r) > 200 {
			s = string(r[len(r)-200:])
		}
		if s == "" {
			return "-"
		}
		return s
	}
	return fmt.Sprintf("the client %s without a /v1/messages request; stderr: %s; stdout: %s", how, tail(stderr), tail(stdout))
}

// fileAfter compares the session file after the run with its copy from
// before: are the original bytes still its prefix?
func fileAfter(before, after string, size int64) *FileAfter {
	fa := &FileAfter{}
	fi, err := os.Stat(after)
	if err != nil {
		return fa
	}
	fa.BytesAdded = fi.Size() - size
	a, err1 := os.Open(before)
	b, err2 := os.Open(after)
	if err1 != nil || err2 != nil {
		return fa
	}
	defer a.Close()
	defer b.Close()
	fa.OriginalPrefixIntact = fi.Size() >= size && sameBytes(bufio.NewReader(a), bufio.NewReader(io.LimitReader(b, size)))
	return fa
}

func sameBytes(a, b io.Reader) bool {
	x, y := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errA := io.ReadFull(a, x)
		m, errB := io.ReadFull(b, y)
		if n != m || !bytes.Equal(x[:n], y[:m]) {
			return false
		}
		if errA != nil || errB != nil {
			return errA != nil && errB != nil
		}
	}
}

// outDir creates the output folder, or a new temporary one
// ($REALCLIENT_TMP or the system's) named prefix*.
func outDir(out, prefix string) (string, error) {
	if out == "" {
		return os.MkdirTemp(os.Getenv("REALCLIENT_TMP"), prefix)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return filepath.Abs(out)
}

// Summary is the one-line verdict the CLI prints.
func (r *ResumeReport) Summary() string {
	name := filepath.Base(r.Transcript)
	if r.Verdict == NotDriven {
		return fmt.Sprintf("%s %s: %s (out=%s)", NotDriven, name, r.Reason, r.Out)
	}
	s := r.Stats
	thinking := "no"
	if n := s.Thinking + s.RedactedThinking; n > 0 {
		thinking = fmt.Sprintf("yes(%d)", n)
	}
	line := fmt.Sprintf("%s %s: messages=%d (user %d, assistant %d, system %d) tool_pairs=%d chars=%d request_bytes=%d thinking=%s",
		r.Verdict, name, s.Messages, s.User, s.Assistant, s.System, s.ToolPairs, s.Chars, s.RequestBytes, thinking)
	if h := r.History; h != nil {
		line += fmt.Sprintf(" | history %d/%d user+assistant records in request (missing %d [sidechain %d], empty %d; on our parent walk %d)",
			h.Found+h.Partial, h.UARecords, h.Missing, h.MissingSidechain, h.Empty, h.OnChain)
	}
	if len(r.Problems) > 0 {
		line += " | first problem: " + r.Problems[0]
	}
	return line + " | out=" + r.Out
}
