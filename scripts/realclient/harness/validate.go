package harness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Verdict is what Validate finds in one request body. Problems are what
// the real API would most likely answer with a 400; warnings are odd but
// accepted.
type Verdict struct {
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
	Stats    Stats    `json:"stats"`
}

// Stats describes a request body.
type Stats struct {
	Messages         int    `json:"messages"`          // entries of the messages array
	User             int    `json:"user"`              // of which role user
	Assistant        int    `json:"assistant"`         // role assistant
	System           int    `json:"system"`            // role system (2.1.3xx per-turn control)
	Turns            int    `json:"turns"`             // user/assistant turns after merging same-role messages
	ToolPairs        int    `json:"tool_pairs"`        // tool_use blocks answered in the next turn
	Chars            int    `json:"chars"`             // characters of the messages array's JSON
	Thinking         int    `json:"thinking"`          // thinking blocks
	RedactedThinking int    `json:"redacted_thinking"` // redacted_thinking blocks
	Model            string `json:"model"`
	RequestBytes     int    `json:"request_bytes"`  // byte length of the whole body
	MessagesBytes    int    `json:"messages_bytes"` // byte length of the messages array's JSON, as sent
}

// Valid reports whether no problem was found.
func (v Verdict) Valid() bool { return len(v.Problems) == 0 }

// looksSigned matches a real signature (base64, long); "[REDACTED]" and
// similar placeholders do not.
var looksSigned = regexp.MustCompile(`^[A-Za-z0-9+/=_-]{16,}$`)

type block = map[string]any

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks returns a message's content as blocks (a string is one text
// block) and whether content was a string.
func (m apiMessage) blocks() ([]any, bool) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []any{block{"type": "text", "text": s}}, true
	}
	var list []any
	json.Unmarshal(m.Content, &list)
	return list, false
}

// Validate checks one POST /v1/messages body against the Messages API
// rules as we read them. With prompt != "" the last user turn must end
// with that text.
//
// Problems: roles other than user/assistant/system; empty content (string
// or array) and empty or whitespace-only text; after merging consecutive
// same-role turns (system turns skipped), a tool_use without its
// tool_result in the very next user turn, a tool_result without its
// tool_use in the previous assistant turn, a system turn between the two,
// a tool_result after other content of its turn; duplicate tool_use ids
// and an input that is not an object; thinking without a signature,
// redacted_thinking without data, either in a user turn; a last turn that
// is not the user's. Warnings: a first turn that is not the user's, a
// signature that looks like a placeholder.
func Validate(body []byte, prompt string) Verdict {
	v := Verdict{Problems: []string{}, Warnings: []string{}}
	raw := gjson.GetBytes(body, "messages").Raw
	v.Stats.RequestBytes = len(body)
	v.Stats.MessagesBytes = len(raw)
	v.Stats.Chars = utf8.RuneCountInString(raw)
	v.Stats.Model = gjson.GetBytes(body, "model").String()
	var msgs []apiMessage
	if err := json.Unmarshal([]byte(raw), &msgs); err != nil || len(msgs) == 0 {
		v.Problems = append(v.Problems, "messages missing or empty")
		return v
	}
	v.Stats.Messages = len(msgs)
	v.checkBlocks(msgs)
	turns := mergeTurns(msgs)
	v.Stats.Turns = len(turns)
	v.checkPairs(turns)
	if len(turns) > 0 {
		last := turns[len(turns)-1]
		if last.role != "user" {
			v.problem("last turn is %s, not user", last.role)
		} else if prompt != "" {
			var texts []string
			for _, b := range last.blocks {
				if typeOf(b.b) == "text" {
					s, _ := b.b["text"].(string)
					texts = append(texts, s)
				}
			}
			if len(texts) == 0 || strings.TrimSpace(texts[len(texts)-1]) != strings.TrimSpace(prompt) {
				end := "nothing"
				if len(texts) > 0 {
					end = fmt.Sprintf("%q", cut(texts[len(texts)-1], 60))
				}
				v.problem("last user turn does not end with the prompt %q (ends with %s)", prompt, end)
			}
		}
	}
	return v
}

func (v *Verdict) problem(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

func (v *Verdict) warning(format string, args ...any) {
	v.Warnings = append(v.Warnings, fmt.Sprintf(format, args...))
}

// checkBlocks applies the rules that look at one message or block alone.
func (v *Verdict) checkBlocks(msgs []apiMessage) {
	seen := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case "user":
			v.Stats.User++
		case "assistant":
			v.Stats.Assistant++
		case "system":
			v.Stats.System++
		default:
			v.problem("messages.%d: unknown role %q", i, m.Role)
			continue
		}
		list, isString := m.blocks()
		if isString {
			if s, _ := list[0].(block)["text"].(string); strings.TrimSpace(s) == "" {
				v.problem("messages.%d: empty string content", i)
			}
			continue
		}
		if len(list) == 0 {
			v.problem("messages.%d: empty content array", i)
			continue
		}
		for j, x := range list {
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			b, ok := x.(block)
			if !ok {
				v.problem("%s: a content block that is not an object", where)
				continue
			}
			switch t := typeOf(b); t {
			case "text":
				s, isStr := b["text"].(string)
				if !isStr || s == "" {
					v.problem("%s: empty text block", where)
				} else if strings.TrimSpace(s) == "" {
					v.problem("%s: whitespace-only text block", where)
				}
			case "thinking", "redacted_thinking":
				if t == "thinking" {
					v.Stats.Thinking++
					sig, _ := b["signature"].(string)
					if sig == "" {
						v.problem("%s: thinking block without signature", where)
					} else if !looksSigned.MatchString(sig) {
						v.warning("%s: thinking signature looks fake or redacted: %q", where, cut(sig, 30))
					}
				} else {
					v.Stats.RedactedThinking++
					if d, _ := b["data"].(string); d == "" {
						v.problem("%s: redacted_thinking without data", where)
					}
				}
				if m.Role != "assistant" {
					v.problem("%s: %s block in a %s message", where, t, m.Role)
				}
			case "tool_use":
				if m.Role != "assistant" {
					v.problem("%s: tool_use in a %s message", where, m.Role)
				}
				id, _ := b["id"].(string)
				if seen[id] {
					v.problem("%s: duplicate tool_use id %s", where, id)
				}
				seen[id] = true
				if _, ok := b["input"].(map[string]any); !ok {
					v.problem("%s: tool_use.input is not an object", where)
				}
			case "tool_result":
				if m.Role != "user" {
					v.problem("%s: tool_result in a %s message", where, m.Role)
				}
			}
		}
	}
}

// turn is a run of consecutive same-role user or assistant messages;
// afterSystem says a system message came right before it.
type turn struct {
	role        string
	blocks      []indexed
	afterSystem bool
}

type indexed struct {
	msg int
	b   block
}

func mergeTurns(msgs []apiMessage) []turn {
	var turns []turn
	pendingSystem := false
	for i, m := range msgs {
		if m.Role == "system" {
			pendingSystem = true
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		list, _ := m.blocks()
		var bs []indexed
		for _, x := range list {
			if b, ok := x.(block); ok {
				bs = append(bs, indexed{i, b})
			}
		}
		if n := len(turns); n > 0 && turns[n-1].role == m.Role {
			turns[n-1].blocks = append(turns[n-1].blocks, bs...)
		} else {
			turns = append(turns, turn{role: m.Role, blocks: bs, afterSystem: pendingSystem})
		}
		pendingSystem = false
	}
	return turns
}

// checkPairs applies the tool_use/tool_result adjacency rules on merged
// turns and counts the pairs.
func (v *Verdict) checkPairs(turns []turn) {
	if len(turns) > 0 && turns[0].role != "user" {
		v.warning("first turn is %s, not user", turns[0].role)
	}
	for k, t := range turns {
		if t.role == "assistant" {
			ids := toolIDs(t, "tool_use", "id")
			if len(ids) == 0 {
				continue
			}
			var next *turn
			got := map[string]bool{}
			if k+1 < len(turns) {
				next = &turns[k+1]
				for _, id := range toolIDs(*next, "tool_result", "tool_use_id") {
					got[id] = true
				}
			}
			var missing []string
			for _, id := range ids {
				if !got[id] {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				v.problem("messages.%d: tool_use ids without tool_result immediately after: %s",
					t.blocks[0].msg, strings.Join(missing, ", "))
			} else if next != nil && next.afterSystem {
				v.problem("messages.%d: a system turn sits between tool_use and its tool_result", next.blocks[0].msg)
			}
			v.Stats.ToolPairs += len(ids) - len(missing)
			continue
		}
		prev := map[string]bool{}
		if k > 0 && turns[k-1].role == "assistant" {
			for _, id := range toolIDs(turns[k-1], "tool_use", "id") {
				prev[id] = true
			}
		}
		other := false
		for _, b := range t.blocks {
			if typeOf(b.b) != "tool_result" {
				other = true
				continue
			}
			id, _ := b.b["tool_use_id"].(string)
			if !prev[id] {
				v.problem("messages.%d: tool_result %s has no tool_use in the previous assistant turn", b.msg, id)
			}
			if other {
				v.problem("messages.%d: tool_result %s comes after non-tool_result content", b.msg, id)
			}
		}
	}
}

func toolIDs(t turn, typ, key string) []string {
	var ids []string
	for _, b := range t.blocks {
		if typeOf(b.b) == typ {
			id, _ := b.b[key].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

func typeOf(b block) string {
	t, _ := b["type"].(string)
	return t
}

// cut shortens s to at most n characters.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
