// Package mcpserve is a small Model Context Protocol server over stdio:
// newline-delimited JSON-RPC 2.0 with the methods a tools-only server
// needs (initialize, ping, tools/list, tools/call). It imports nothing of
// ccm and nothing outside the standard library, so that linking it into
// ccm does not slow the start of every hook (an SDK with its schema,
// HTTP and authentication packages made the idle hook 1.45x slower).
package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Tool is one tool the server offers.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Call runs the tool with its arguments (a JSON object). An error is
	// returned to the model as the tool's result, marked as an error.
	Call func(ctx context.Context, args json.RawMessage) (string, error) `json:"-"`
}

// Server answers one client.
type Server struct {
	Name, Version string
	Instructions  string
	Tools         []Tool
}

// Protocol versions the server speaks, newest first.
var versions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// maxMessage bounds one incoming message.
const maxMessage = 16 << 20

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
)

// Serve reads requests from r and writes responses to w until r ends or
// ctx is done. Requests are answered one at a time, in order.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var mu sync.Mutex
	write := func(v any) error {
		b, err := marshal(v)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		_, err = w.Write(append(b, '\n'))
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			if out := s.handleMessage(ctx, line); out != nil {
				if werr := write(out); werr != nil {
					return werr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line, refusing one longer than maxMessage (its rest
// is skipped: it is answered as a parse error).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over && len(line)+len(chunk) <= maxMessage {
			line = append(line, chunk...)
		} else {
			over = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			return []byte("!"), err // not JSON: answered as a parse error
		}
		return line, err
	}
}

// handleMessage answers one message: a request, a notification, or a batch
// of them. It returns nil when nothing is to be written.
func (s *Server) handleMessage(ctx context.Context, msg []byte) any {
	msg = bytes.TrimSpace(msg)
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(msg, &batch); err != nil || len(batch) == 0 {
			return response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{codeParse, "parse error"}}
		}
		var out []any
		for _, m := range batch {
			if r := s.handle(ctx, m); r != nil {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	if r := s.handle(ctx, msg); r != nil {
		return r
	}
	return nil
}

func (s *Server) handle(ctx context.Context, msg []byte) *response {
	var req request
	if err := json.Unmarshal(msg, &req); err != nil {
		return &response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{codeParse, "parse error"}}
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		if len(req.ID) == 0 {
			return nil // a response from the client, or garbage without an id
		}
		return &response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{codeInvalidRequest, "invalid request"}}
	}
	if len(req.ID) == 0 {
		return nil // notifications (initialized, cancelled) need no answer
	}
	res, rerr := s.call(ctx, req)
	if rerr != nil {
		return &response{JSONRPC: "2.0", ID: req.ID, Error: rerr}
	}
	return &response{JSONRPC: "2.0", ID: req.ID, Result: res}
}

func (s *Server) call(ctx context.Context, req request) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		v := versions[0]
		for _, known := range versions {
			if p.ProtocolVersion == known {
				v = known
			}
		}
		res := map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": s.Name, "version": s.Version},
		}
		if s.Instructions != "" {
			res["instructions"] = s.Instructions
		}
		return res, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		tools := s.Tools
		if tools == nil {
			tools = []Tool{}
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &rpcError{codeInvalidParams, "invalid params: " + err.Error()}
		}
		for _, t := range s.Tools {
			if t.Name != p.Name {
				continue
			}
			args := p.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			text, err := t.Call(ctx, args)
			if err != nil {
				return toolResult(err.Error(), true), nil
			}
			return toolResult(text, false), nil
		}
		return nil, &rpcError{codeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name)}
	}
	return nil, &rpcError{codeNoMethod, "method not found: " + req.Method}
}

func toolResult(text string, isError bool) map[string]any {
	res := map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}
	if isError {
		res["isError"] = true
	}
	return res
}

// marshal encodes a message on one line, without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ErrArgs wraps a tool's bad arguments.
var ErrArgs = errors.New("invalid arguments")

// Args decodes a tool's arguments into v, refusing unknown fields.
func Args(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrArgs, err)
	}
	return nil
}
