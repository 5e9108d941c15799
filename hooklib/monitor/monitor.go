// Package monitor is ccm's context monitor: it reads how full a session's
// context is from the last usage the client recorded in the transcript,
// read from the file's end, and decides when to warn. Warnings fire once
// per threshold crossed; a purge or a compaction that lowers the fill
// re-arms them. The package holds the decisions and the texts; hooklib
// runs them from the Stop and UserPromptSubmit hooks and keeps State in
// the session's state file.
package monitor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/transcript"
	"ccm/transcript/audit"
)

// DefaultWindow is the context window of current models.
const DefaultWindow = 200_000

// LargeWindow is the window of models run with 1M context.
const LargeWindow = 1_000_000

// TailLimit bounds how far from its end a hook reads a transcript looking
// for the last usage: past it the fill is reported as unknown. Usage
// records come every response, so only a response followed by tens of MB
// of tool output (which the client would have compacted) gets there.
const TailLimit = 32 << 20

// largeModels are the model ids (prefixes) whose default window is 1M:
// Claude Code 2.1.330 reports modelUsage.contextWindow 1000000 for
// claude-opus-5-5 (realclient run, -p mode).
var largeModels = []string{"claude-opus-5"}

// Window returns the context window for model: override when > 0, else
// 1M for a model id marked [1m], a model of largeModels, or when the fill
// itself is past 200k (only a 1M model can report that), else 200k.
func Window(model string, fill, override int64) int64 {
	m := strings.ToLower(model)
	switch {
	case override > 0:
		return override
	case strings.Contains(m, "[1m]"), fill > DefaultWindow:
		return LargeWindow
	}
	for _, p := range largeModels {
		if strings.HasPrefix(m, p) {
			return LargeWindow
		}
	}
	return DefaultWindow
}

// Fill is a session's context fill.
type Fill struct {
	Tokens int64
	Window int64
	Model  string
	// Known is false when the transcript has no usage yet (or none after
	// its last compact boundary).
	Known bool
	// Compacted is true when the last compact boundary comes after the
	// last usage: the fill is low and about to be reported again.
	Compacted bool
}

// Pct is the fill in percent of the window.
func (f Fill) Pct() float64 {
	if f.Window <= 0 {
		return 0
	}
	return float64(f.Tokens) * 100 / float64(f.Window)
}

// Settle bounds how long ReadFillAfter waits for the client to write the
// response a Stop hook was called for.
const Settle = 1500 * time.Millisecond

// ReadFillAfter reads the fill once the transcript holds the response
// whose text is last (Stop's last_assistant_message). The client writes
// the transcript asynchronously: with the real client a Stop hook 150 ms
// after the prompt still read the previous response's usage. It polls for
// up to Settle, then takes what is there; synced is false then.
func ReadFillAfter(path string, override int64, last string) (f Fill, synced bool, err error) {
	want := norm(last, 200)
	deadline := time.Now().Add(Settle)
	for {
		var text string
		f, text, err = readFill(path, override)
		if err != nil || want == "" || strings.Contains(norm(text, 4096), want) {
			return f, true, err
		}
		if time.Now().After(deadline) {
			return f, false, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// norm folds white space and keeps the first n bytes.
func norm(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// ReadFill reads the fill of the transcript at path from its end.
// override is CONTEXT_MAX_TOKENS (0 for none).
func ReadFill(path string, override int64) (Fill, error) {
	f, _, err := readFill(path, override)
	return f, err
}

func readFill(path string, override int64) (Fill, string, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return Fill{}, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Fill{}, "", err
	}
	if !fi.Mode().IsRegular() {
		return Fill{}, "", fmt.Errorf("%s is not a regular file", path)
	}
	tf, err := transcript.ReadTail(f, fi.Size(), TailLimit, false)
	if err != nil {
		return Fill{}, "", fmt.Errorf("read %s: %w", path, err)
	}
	if !tf.HasUsage {
		return Fill{Compacted: tf.Boundary >= 0, Window: Window("", 0, override)}, "", nil
	}
	n := tf.Usage.Fill()
	return Fill{Tokens: n, Window: Window(tf.Model, n, override), Model: tf.Model, Known: true}, tf.Text, nil
}

// ParseThresholds parses "70,80,90" into sorted, distinct percentages in
// 1..100; ok is false when anything in s is not one.
func ParseThresholds(s string) (ts []int, ok bool) {
	ok = true
	seen := map[int]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		n, err := strconv.Atoi(strings.TrimSuffix(f, "%"))
		if err != nil || n < 1 || n > 100 {
			ok = false
			continue
		}
		if !seen[n] {
			seen[n] = true
			ts = append(ts, n)
		}
	}
	sort.Ints(ts)
	return ts, ok
}

// State is what the monitor remembers about a session.
type State struct {
	// Level is the highest threshold warned about and not re-armed since
	// (0: none).
	Level int `json:"level,omitempty"`
	// Tokens is the fill seen at the last Stop.
	Tokens int64 `json:"tokens,omitempty"`
	// Pending is the warning for the model, sent with the next prompt.
	Pending string `json:"pending,omitempty"`
	// Audit is the context audit, kept up to date at each Stop.
	Audit *audit.Audit `json:"audit,omitempty"`
}

// Crossed returns the highest threshold at or below pct, or 0.
func Crossed(ts []int, pct float64) int {
	c := 0
	for _, t := range ts {
		if pct >= float64(t) {
			c = t
		}
	}
	return c
}

// Step updates st for a new fill and returns the threshold newly crossed
// (0 for none). A fill that fell below the level re-arms the thresholds
// above it: after a purge or compaction the next crossing warns again.
func Step(st *State, ts []int, f Fill) int {
	if !f.Known {
		if f.Compacted {
			st.Level, st.Tokens = 0, 0
		}
		return 0
	}
	c := Crossed(ts, f.Pct())
	st.Tokens = f.Tokens
	if c < st.Level {
		st.Level = c // re-armed
		return 0
	}
	if c == st.Level {
		return 0
	}
	st.Level = c
	return c
}

// UserMessage is the warning shown to the user for a crossing of level.
func UserMessage(f Fill, level int, ts []int) string {
	head, action := "Context", "Run /purge (stubs large tool outputs) or /compact when convenient."
	switch {
	case len(ts) > 0 && level == ts[len(ts)-1]:
		head, action = "Context nearly full", "Run /purge or /compact now: compaction is imminent."
	case len(ts) > 1 && level == ts[len(ts)-2]:
		action = "Consider /purge (stubs large tool outputs) or /compact soon."
	}
	return fmt.Sprintf("ccm: %s at %.0f%% (%s of %s tokens). %s", head, f.Pct(), ui.Count(f.Tokens), ui.Count(f.Window), action)
}

// ModelMessage is the same warning for the model, sent with the user's
// next prompt.
func ModelMessage(f Fill, level int) string {
	return fmt.Sprintf("[ccm context monitor] The context window is %.0f%% full (%s of %s tokens; threshold %d%% crossed). "+
		"Keep tool outputs small (limit reads and command output), and at a natural break suggest that the user run /purge or /compact.",
		f.Pct(), ui.Count(f.Tokens), ui.Count(f.Window), level)
}
