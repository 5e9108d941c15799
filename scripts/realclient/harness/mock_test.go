package harness

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// startMock starts a mock with script, logging into a temp dir.
func startMock(t *testing.T, script string) (*Mock, string) {
	t.Helper()
	steps, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(t.TempDir(), "requests")
	m, err := NewMock(steps, logDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, logDir
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readStream is a small Messages API stream client: it rebuilds the
// message from the events the way an SDK does, and returns it with the
// event names in order.
func readStream(t *testing.T, r io.Reader) (map[string]any, []string) {
	t.Helper()
	var msg map[string]any
	var blocks []map[string]any
	partial := map[int]string{}
	var names []string
	sc := bufio.NewScanner(r)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
			names = append(names, v)
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: bad data %q", name, data)
		}
		if ev["type"] != name {
			t.Fatalf("event %s carries type %v", name, ev["type"])
		}
		switch name {
		case "message_start":
			msg = ev["message"].(map[string]any)
		case "content_block_start":
			blocks = append(blocks, ev["content_block"].(map[string]any))
		case "content_block_delta":
			i := int(ev["index"].(float64))
			d := ev["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				blocks[i]["text"] = blocks[i]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			case "thinking_delta":
				blocks[i]["thinking"] = blocks[i]["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				blocks[i]["signature"] = blocks[i]["signature"].(string) + d["signature"].(string)
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			i := int(ev["index"].(float64))
			if s, ok := partial[i]; ok {
				var in any
				if err := json.Unmarshal([]byte(s), &in); err != nil {
					t.Fatalf("tool input %q: %v", s, err)
				}
				blocks[i]["input"] = in
			}
		case "message_delta":
			msg["stop_reason"] = ev["delta"].(map[string]any)["stop_reason"]
		}
	}
	msg["content"] = blocks
	return msg, names
}

const testScript = `[
 {"content": [{"type": "thinking", "thinking": "Let me think: ünïcode and \"quotes\"."},
              {"type": "text", "text": "A text longer than forty characters, so it comes in pieces."},
              {"type": "tool_use", "name": "Bash", "input": {"command": "echo héllo", "n": 3}}]},
 {"text": "Second answer."},
 {"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}
]`

const mainBody = `{"model":"claude-opus-4-6","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`

func TestMockStreamsScriptedBlocks(t *testing.T) {
	m, _ := startMock(t, testScript)
	resp := post(t, m.URL()+"/v1/messages?beta=true", mainBody)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
	}
	msg, names := readStream(t, resp.Body)
	wantNames := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("events %q\nwant %q", names, wantNames)
	}
	want := []map[string]any{
		{"type": "thinking", "thinking": "Let me think: ünïcode and \"quotes\".", "signature": "mock-signature"},
		{"type": "text", "text": "A text longer than forty characters, so it comes in pieces."},
		{"type": "tool_use", "id": "toolu_mock_01", "name": "Bash", "input": map[string]any{"command": "echo héllo", "n": float64(3)}},
	}
	if got := msg["content"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("content %#v\nwant %#v", got, want)
	}
	if msg["stop_reason"] != "tool_use" || msg["role"] != "assistant" || msg["model"] != "claude-opus-4-6" {
		t.Fatalf("message %v", msg)
	}
}

func TestMockSideRequestsKeepTheScript(t *testing.T) {
	m, logDir := startMock(t, testScript)
	// Skip the first step with a main request.
	resp := post(t, m.URL()+"/v1/messages", mainBody)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// A request without tools is a side query: it gets its own text and
	// the script stays where it was.
	resp = post(t, m.URL()+"/v1/messages", `{"model":"claude-haiku","messages":[{"role":"user","content":"title?"}]}`)
	var side map[string]any
	json.NewDecoder(resp.Body).Decode(&side)
	resp.Body.Close()
	if side["content"].([]any)[0].(map[string]any)["text"] != "mock side reply" || side["stop_reason"] != "end_turn" {
		t.Fatalf("side reply %v", side)
	}
	resp = post(t, m.URL()+"/v1/messages", strings.Replace(mainBody, `"stream":true`, `"stream":false`, 1))
	var second map[string]any
	json.NewDecoder(resp.Body).Decode(&second)
	resp.Body.Close()
	if second["content"].([]any)[0].(map[string]any)["text"] != "Second answer." {
		t.Fatalf("second main reply %v", second)
	}
	resp = post(t, m.URL()+"/v1/messages", mainBody)
	var apiErr map[string]any
	json.NewDecoder(resp.Body).Decode(&apiErr)
	resp.Body.Close()
	if resp.StatusCode != 529 || apiErr["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Fatalf("error step: status %d, %v", resp.StatusCode, apiErr)
	}
	// Script used up: the default text.
	resp = post(t, m.URL()+"/v1/messages", strings.Replace(mainBody, `"stream":true`, `"stream":false`, 1))
	var last map[string]any
	json.NewDecoder(resp.Body).Decode(&last)
	resp.Body.Close()
	if last["content"].([]any)[0].(map[string]any)["text"] != "pong (mock)" || m.StepsLeft() != 0 {
		t.Fatalf("after the script: %v, %d steps left", last, m.StepsLeft())
	}
	var kinds []string
	for _, r := range m.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if want := []string{"main", "side", "main", "main", "main"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %q, want %q", kinds, want)
	}
	// The log holds the exact body and no API key.
	data, err := os.ReadFile(filepath.Join(logDir, "002.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-ant-secret") || strings.Contains(strings.ToLower(string(data)), "x-api-key") {
		t.Fatalf("the API key was logged: %s", data)
	}
	var rec struct {
		Seq  int             `json:"seq"`
		Kind string          `json:"kind"`
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Seq != 2 || rec.Kind != "side" ||
		!strings.Contains(string(rec.Body), `"title?"`) {
		t.Fatalf("log record %s (%v)", data, err)
	}
}

func TestMockOtherEndpoints(t *testing.T) {
	m, logDir := startMock(t, `[]`)
	resp := post(t, m.URL()+"/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"`+strings.Repeat("x", 400)+`"}]}`)
	var ct map[string]any
	json.NewDecoder(resp.Body).Decode(&ct)
	resp.Body.Close()
	// The messages JSON is 430 bytes (27 + 400 + 3); a quarter, rounded down.
	if ct["input_tokens"] != float64(107) {
		t.Fatalf("count_tokens %v", ct)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/models", 200}, {"GET", "/v1/models/claude-opus-5-5", 200}, {"HEAD", "/api/hello", 200},
		{"GET", "/api/hello", 200}, {"GET", "/v1/nothing", 404}, {"POST", "/v2/messages", 404}} {
		req, _ := http.NewRequest(c.method, m.URL()+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
	}
	var kinds []string
	for _, r := range m.Requests() {
		kinds = append(kinds, r.Kind)
	}
	want := []string{"count_tokens", "models", "models", "probe", "probe", "unknown", "unknown"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %q, want %q", kinds, want)
	}
	logs, _ := filepath.Glob(filepath.Join(logDir, "*.json"))
	if len(logs) != len(want) {
		t.Fatalf("%d log files, want %d", len(logs), len(want))
	}
}
