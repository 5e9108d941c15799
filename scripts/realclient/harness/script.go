package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Step is one scripted answer of the mock to a main request:
// {"content": [blocks], "stop_reason"?}, {"text": "..."} or
// {"error": {"status", "type", "message"}}. Blocks are text, tool_use (the
// id may be left out; the mock numbers it) or thinking (the mock signs it).
// stop_reason defaults to tool_use when a tool_use block is present, else
// end_turn.
type Step struct {
	Content    []map[string]any `json:"content,omitempty"`
	Text       string           `json:"text,omitempty"`
	StopReason string           `json:"stop_reason,omitempty"`
	Error      *StepError       `json:"error,omitempty"`
}

// StepError is a scripted API error: the mock answers with this HTTP
// status and an Anthropic error body.
type StepError struct {
	Status  int    `json:"status,omitempty"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
}

// ParseScript reads a script: a JSON list of steps.
func ParseScript(data []byte) ([]Step, error) {
	var steps []Step
	if err := json.Unmarshal(data, &steps); err != nil {
		return nil, fmt.Errorf("script: a JSON list of steps is expected: %w", err)
	}
	return steps, nil
}

// Substitute replaces each {{NAME}} placeholder in a JSON text by its
// value, escaped for a JSON string (placeholders stand inside strings).
func Substitute(text string, values map[string]string) string {
	for name, v := range values {
		q, _ := json.Marshal(v)
		text = strings.ReplaceAll(text, "{{"+name+"}}", string(q[1:len(q)-1]))
	}
	return text
}

// message is an assistant message as the Messages API returns it.
type message struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        usage            `json:"usage"`
}

type usage struct {
	InputTokens              int    `json:"input_tokens"`
	OutputTokens             int    `json:"output_tokens"`
	CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
	ServiceTier              string `json:"service_tier"`
}

// buildMessage turns a step into the assistant message the mock answers
// with, filling in tool ids, empty inputs and signatures. m.mu is held.
func (m *Mock) buildMessage(step Step, body []byte) *message {
	blocks := step.Content
	if blocks == nil {
		text := step.Text
		if text == "" {
			text = m.DefaultText
		}
		blocks = []map[string]any{{"type": "text", "text": text}}
	}
	out := make([]map[string]any, 0, len(blocks))
	hasTool := false
	for _, b := range blocks {
		c := make(map[string]any, len(b)+2)
		for k, v := range b {
			c[k] = v
		}
		switch c["type"] {
		case "tool_use":
			hasTool = true
			if _, ok := c["id"]; !ok {
				m.toolSeq++
				c["id"] = fmt.Sprintf("toolu_mock_%02d", m.toolSeq)
			}
			if _, ok := c["input"]; !ok {
				c["input"] = map[string]any{}
			}
		case "thinking":
			if _, ok := c["signature"]; !ok {
				c["signature"] = "mock-signature"
			}
		}
		out = append(out, c)
	}
	stop := step.StopReason
	if stop == "" {
		stop = "end_turn"
		if hasTool {
			stop = "tool_use"
		}
	}
	model := gjson.GetBytes(body, "model").String()
	if model == "" {
		model = MockModel
	}
	m.msgSeq++
	return &message{
		ID: fmt.Sprintf("msg_mock_%03d", m.msgSeq), Type: "message", Role: "assistant", Model: model,
		Content: out, StopReason: &stop,
		Usage: usage{InputTokens: estimateTokens(body), OutputTokens: 10, ServiceTier: "standard"},
	}
}
