package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// writeSSE streams msg as the Messages API does with "stream": true:
// message_start (empty content), ping, then per block content_block_start,
// its deltas and content_block_stop, then message_delta (the stop reason)
// and message_stop. Text goes in 40-character text_delta pieces, a
// tool_use input as two input_json_delta halves, a thinking block as one
// thinking_delta and one signature_delta, as the client parses them.
func writeSSE(w http.ResponseWriter, msg *message) {
	h := w.Header()
	h.Set("content-type", "text/event-stream")
	h.Set("cache-control", "no-cache")
	h.Set("request-id", "req_mock")
	w.WriteHeader(200)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	start := *msg
	start.Content = []map[string]any{}
	start.StopReason = nil
	start.Usage.OutputTokens = 1
	event("message_start", map[string]any{"type": "message_start", "message": start})
	event("ping", map[string]any{"type": "ping"})
	for i, b := range msg.Content {
		blockStart := func(cb any) {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": cb})
		}
		delta := func(d map[string]any) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		switch b["type"] {
		case "text":
			blockStart(map[string]any{"type": "text", "text": ""})
			s, _ := b["text"].(string)
			r := []rune(s)
			for j := 0; j < max(len(r), 1); j += 40 {
				delta(map[string]any{"type": "text_delta", "text": string(r[j:min(j+40, len(r))])})
			}
		case "tool_use":
			blockStart(map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}})
			in, _ := json.Marshal(b["input"])
			cut := len(in) / 2
			for cut > 0 && !utf8.RuneStart(in[cut]) { // never split a character
				cut--
			}
			delta(map[string]any{"type": "input_json_delta", "partial_json": string(in[:cut])})
			delta(map[string]any{"type": "input_json_delta", "partial_json": string(in[cut:])})
		case "thinking":
			blockStart(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
			delta(map[string]any{"type": "thinking_delta", "thinking": b["thinking"]})
			delta(map[string]any{"type": "signature_delta", "signature": b["signature"]})
		default: // anything else goes whole in its start event
			blockStart(b)
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": msg.Usage.OutputTokens}})
	event("message_stop", map[string]any{"type": "message_stop"})
	if flusher != nil {
		flusher.Flush()
	}
}
