package report

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/testutil"
	"ccm/purge"
	"ccm/transcript"
)

// wantContexts reads a transcript with encoding/json, apart from the
// code under test, and returns the context of every request: assistant
// records of the main conversation with a usage, one per run of lines
// sharing a message id, the last line's figure; API error records are
// not requests. In a subagent's file every record is a sidechain record,
// and they are its conversation.
func wantContexts(t *testing.T, path string, subagent bool) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var out []int64
	last := ""
	for sc.Scan() {
		var r struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			APIError    bool   `json:"isApiErrorMessage"`
			Message     struct {
				ID    string          `json:"id"`
				Usage json.RawMessage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Type != "assistant" || r.IsSidechain && !subagent || r.APIError || len(r.Message.Usage) == 0 || string(r.Message.Usage) == "null" {
			continue
		}
		var u map[string]any
		json.Unmarshal(r.Message.Usage, &u)
		var total int64
		for _, k := range []string{"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"} {
			if v, ok := u[k].(float64); ok {
				total += int64(v)
			}
		}
		if len(out) == 0 || r.Message.ID == "" || r.Message.ID != last {
			out = append(out, 0)
			last = r.Message.ID
		}
		out[len(out)-1] = total
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpusPages builds the page of every corpus transcript: the
// requests match an independent reading, the purge curve has a point per
// request, and the page holds no markup or address from the transcript.
func TestCorpusPages(t *testing.T) {
	root := filepath.Join(testutil.CorpusConfigDir(t), "projects")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		n++
		rel, _ := filepath.Rel(root, path)
		s, err := Collect(context.Background(), path, Options{Purge: true, PurgeOptions: purge.DefaultOptions()})
		if err != nil {
			// Only files with nothing to show may fail, and they say why.
			if !strings.Contains(err.Error(), transcript.ErrNotTranscript.Error()) {
				t.Errorf("%s: %v", rel, err)
			}
			return nil
		}
		want := wantContexts(t, path, strings.Contains(path, "/subagents/") || strings.HasPrefix(filepath.Base(path), "agent-"))
		if strings.HasSuffix(path, testutil.SpotterAgent) && len(want) == 0 {
			t.Errorf("%s: the subagent's requests should count", rel)
		}
		if len(s.Turns) != len(want) {
			t.Errorf("%s: %d requests, an independent reading finds %d", rel, len(s.Turns), len(want))
			return nil
		}
		for i := range want {
			if s.Turns[i].Context() != want[i] {
				t.Errorf("%s: request %d: context %d, want %d", rel, i+1, s.Turns[i].Context(), want[i])
				break
			}
		}
		if len(s.Turns) > 0 && s.PurgeNote == "" && len(s.After) != len(s.Turns) {
			t.Errorf("%s: %d purge points for %d requests", rel, len(s.After), len(s.Turns))
		}
		for i, a := range s.After {
			if a < 0 || a > s.Turns[i].Context() {
				t.Errorf("%s: request %d: after purge %d, context %d", rel, i+1, a, s.Turns[i].Context())
				break
			}
		}
		checkInert(t, render(t, s))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 30 {
		t.Fatalf("only %d corpus transcripts", n)
	}
}
