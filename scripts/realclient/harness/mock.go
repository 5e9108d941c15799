package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// MockModel is the model the mock lists and answers as when a request
// names none.
const MockModel = "claude-opus-5-5"

// Request kinds, as logged in requests/NNN.json.
const (
	KindMain        = "main"         // POST /v1/messages with tools: the agent loop; consumes the script
	KindSide        = "side"         // any other POST /v1/messages (titles, summaries)
	KindCountTokens = "count_tokens" // POST /v1/messages/count_tokens
	KindModels      = "models"       // GET /v1/models[/ID]
	KindProbe       = "probe"        // HEAD or GET /api/hello, the connectivity probe
	KindUnknown     = "unknown"      // anything else: 404
)

// Request is one request the mock received. Body holds the exact bytes.
type Request struct {
	Seq    int
	Method string
	Path   string
	Kind   string
	Body   []byte
}

// Mock is a mock Anthropic Messages API on 127.0.0.1. Main requests
// (those that carry tools) are answered from the script, one step each,
// then with DefaultText; side requests get a short text. Every request is
// kept in memory and, with a log folder, written to NNN.json there as
// {seq, time, method, path, kind, headers, body, reply}, without the API
// key headers.
type Mock struct {
	// DefaultText answers main requests once the script is used up.
	DefaultText string

	logDir string
	srv    *http.Server
	ln     net.Listener

	mu       sync.Mutex
	script   []Step
	requests []Request
	seq      int
	toolSeq  int
	msgSeq   int
	logErr   error
}

// NewMock returns a mock that answers from script and logs to logDir
// ("" for no log). It is not serving until Start.
func NewMock(script []Step, logDir string) (*Mock, error) {
	if logDir != "" {
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return nil, err
		}
	}
	return &Mock{DefaultText: "pong (mock)", logDir: logDir, script: append([]Step(nil), script...)}, nil
}

// Start listens on a free port of 127.0.0.1 and serves in the background.
func (m *Mock) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("mock API: %w", err)
	}
	m.ln = ln
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: 30 * time.Second}
	go m.srv.Serve(ln)
	return nil
}

// URL is the base URL to give the client as ANTHROPIC_BASE_URL.
func (m *Mock) URL() string { return "http://" + m.ln.Addr().String() }

// Close stops the server; requests in flight are cut off.
func (m *Mock) Close() error { return m.srv.Close() }

// Requests returns a copy of every request received so far, in order.
func (m *Mock) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Main returns the main requests received so far, in order.
func (m *Mock) Main() []Request {
	var out []Request
	for _, r := range m.Requests() {
		if r.Kind == KindMain {
			out = append(out, r)
		}
	}
	return out
}

// StepsLeft is the number of script steps not used yet.
func (m *Mock) StepsLeft() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.script)
}

// LogError is the first error met writing the request log, if any.
func (m *Mock) LogError() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logErr
}

func (m *Mock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages":
		m.messages(w, r, body)
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		reply := map[string]any{"input_tokens": estimateTokens(body)}
		m.record(r, body, KindCountTokens, reply)
		writeJSON(w, 200, reply)
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && path == "/api/hello":
		m.record(r, body, KindProbe, nil)
		writeJSON(w, 200, map[string]any{})
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/models"):
		model := map[string]any{"type": "model", "id": MockModel, "display_name": "Mock Opus",
			"created_at": "2026-01-01T00:00:00Z"}
		var reply any = model
		if strings.TrimSuffix(path, "/") == "/v1/models" {
			reply = map[string]any{"data": []any{model}, "has_more": false, "first_id": MockModel, "last_id": MockModel}
		}
		m.record(r, body, KindModels, reply)
		writeJSON(w, 200, reply)
	default:
		m.record(r, body, KindUnknown, nil)
		writeJSON(w, 404, apiError("not_found_error", "mock: unknown path "+path))
	}
}

// messages answers POST /v1/messages: from the script for a main request,
// with a short text otherwise; streamed when the body asks for it.
func (m *Mock) messages(w http.ResponseWriter, r *http.Request, body []byte) {
	kind := KindSide
	if t := gjson.GetBytes(body, "tools"); t.IsArray() && len(t.Array()) > 0 {
		kind = KindMain
	}
	m.mu.Lock()
	step := Step{Text: "mock side reply"}
	if kind == KindMain {
		step = Step{Text: m.DefaultText}
		if len(m.script) > 0 {
			step, m.script = m.script[0], m.script[1:]
		}
	}
	var msg *message
	if step.Error == nil {
		msg = m.buildMessage(step, body)
	}
	m.mu.Unlock()
	if e := step.Error; e != nil {
		m.record(r, body, kind, map[string]any{"error": e})
		status := e.Status
		if status == 0 {
			status = 400
		}
		typ, text := e.Type, e.Message
		if typ == "" {
			typ = "invalid_request_error"
		}
		if text == "" {
			text = "mock error"
		}
		writeJSON(w, status, apiError(typ, text))
		return
	}
	m.record(r, body, kind, msg)
	if gjson.GetBytes(body, "stream").Bool() {
		writeSSE(w, msg)
		return
	}
	writeJSON(w, 200, msg)
}

// record keeps a request and writes it to the log folder.
func (m *Mock) record(r *http.Request, body []byte, kind string, reply any) {
	m.mu.Lock()
	m.seq++
	seq := m.seq
	m.requests = append(m.requests, Request{Seq: seq, Method: r.Method, Path: r.URL.RequestURI(), Kind: kind, Body: body})
	m.mu.Unlock()
	if m.logDir == "" {
		return
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		if lk := strings.ToLower(k); lk == "x-api-key" || lk == "authorization" {
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	var logged any
	switch {
	case len(body) == 0:
		logged = nil
	case json.Valid(body):
		logged = json.RawMessage(body)
	default:
		logged = string(body)
	}
	rec := struct {
		Seq     int               `json:"seq"`
		Time    float64           `json:"time"`
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Kind    string            `json:"kind"`
		Headers map[string]string `json:"headers"`
		Body    any               `json:"body"`
		Reply   any               `json:"reply"`
	}{seq, float64(time.Now().UnixMicro()) / 1e6, r.Method, r.URL.RequestURI(), kind, headers, logged, reply}
	data, err := json.MarshalIndent(rec, "", " ")
	if err == nil {
		err = os.WriteFile(filepath.Join(m.logDir, fmt.Sprintf("%03d.json", seq)), append(data, '\n'), 0o644)
	}
	if err != nil {
		m.mu.Lock()
		if m.logErr == nil {
			m.logErr = err
		}
		m.mu.Unlock()
	}
}

// estimateTokens is a rough input-token count: a quarter of the messages'
// JSON length.
func estimateTokens(body []byte) int {
	n := len(gjson.GetBytes(body, "messages").Raw) / 4
	return max(n, 1)
}

func apiError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("content-type", "application/json")
	w.Header().Set("request-id", "req_mock")
	w.WriteHeader(status)
	w.Write(data)
}
