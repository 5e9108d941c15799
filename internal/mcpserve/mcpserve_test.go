package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func server() *Server {
	return &Server{Name: "t", Version: "1", Instructions: "hi",
		Tools: []Tool{{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object"}`),
			Call: func(_ context.Context, args json.RawMessage) (string, error) {
				var in struct {
					Text string `json:"text"`
				}
				if err := Args(args, &in); err != nil {
					return "", err
				}
				if in.Text == "fail" {
					return "", errors.New("it failed")
				}
				return "<" + in.Text + ">", nil
			}}}}
}

// exchange sends lines and returns the responses, one per line.
func exchange(t *testing.T, lines ...string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := server().Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var res []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a response is not one JSON line: %q", l)
		}
		res = append(res, m)
	}
	return res
}

func TestProtocol(t *testing.T) {
	res := exchange(t,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a&b"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fail"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"nope":1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"missing"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
		`not json at all`,
	)
	if len(res) != 9 {
		t.Fatalf("%d responses, want 9 (notifications get none): %v", len(res), res)
	}
	init := res[0]["result"].(map[string]any)
	if init["protocolVersion"] != "2025-03-26" || init["instructions"] != "hi" || init["serverInfo"].(map[string]any)["name"] != "t" {
		t.Fatalf("initialize: %v", init)
	}
	if res[1]["id"] != "two" || len(res[1]["result"].(map[string]any)["tools"].([]any)) != 1 {
		t.Fatalf("tools/list: %v", res[1])
	}
	text := func(r map[string]any) (string, bool) {
		c := r["result"].(map[string]any)
		isErr, _ := c["isError"].(bool)
		return c["content"].([]any)[0].(map[string]any)["text"].(string), isErr
	}
	if s, isErr := text(res[2]); s != "<a&b>" || isErr {
		t.Fatalf("a call: %q %v", s, isErr)
	}
	if s, isErr := text(res[3]); s != "it failed" || !isErr {
		t.Fatalf("a failing call: %q %v", s, isErr)
	}
	if s, isErr := text(res[4]); !strings.Contains(s, "invalid arguments") || !isErr {
		t.Fatalf("bad arguments: %q %v", s, isErr)
	}
	for i, code := range map[int]float64{5: -32602, 6: -32601, 8: -32700} {
		if e, _ := res[i]["error"].(map[string]any); e == nil || e["code"] != code {
			t.Errorf("response %d: %v, want error %v", i, res[i], code)
		}
	}
	if res[7]["id"] != float64(8) || res[7]["result"] == nil {
		t.Fatalf("ping: %v", res[7])
	}
}

func TestBatchAndUnknownVersion(t *testing.T) {
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}` + "\n" +
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]` + "\n"
	server().Serve(context.Background(), strings.NewReader(in), &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("%q", lines)
	}
	var batch []map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("batch answer %q: %v", lines[1], err)
	}
}

func TestOversizedMessageIsAParseError(t *testing.T) {
	var out bytes.Buffer
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxMessage) + `"}}`
	server().Serve(context.Background(), strings.NewReader(big+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"), &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "-32700") || !strings.Contains(lines[1], `"id":2`) {
		t.Fatalf("%d lines: %.200q", len(lines), lines)
	}
}
