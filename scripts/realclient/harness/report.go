// Report: this file writes a session's report: its one-paragraph summary
// and the JSON file the scripts keep.

package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Summary is what the CLI prints: one line for the session, one per hook
// event, markers, and errors.
func (r *SessionReport) Summary() string {
	if r.Verdict == NotDriven {
		return fmt.Sprintf("%s hook-session: %s (out=%s)", NotDriven, r.Reason, r.Out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HOOK-SESSION %s rc=%d requests=%d (main) result=%q out=%s\n", r.Verdict, r.ClaudeRC, r.MainRequests,
		cut(gjson.GetBytes(r.Result, "result").String(), 60), r.Out)
	events := map[string]bool{}
	for ev := range r.Runs {
		events[ev] = true
	}
	for ev := range r.ContextAccepted {
		events[ev] = true
	}
	for k := range r.Delivered {
		if ev, ok := strings.CutPrefix(k, "context:"); ok {
			events[ev] = true
		}
	}
	for _, ev := range sortedKeys(events) {
		var runs []string
		for _, st := range sortedKeys(r.Runs[ev]) {
			runs = append(runs, fmt.Sprintf("%s x%d", st, r.Runs[ev][st]))
		}
		reached := "no"
		if d, ok := r.Delivered["context:"+ev]; ok {
			reached = fmt.Sprintf("request #%d msg %d (%s, %q)", d.RequestSeq, d.Message, d.Role, d.How)
		}
		fmt.Fprintf(&b, "  %-18s runs=%-16s additionalContext accepted=%d  reached model: %s\n", ev,
			strings.Join(runs, ","), r.ContextAccepted[ev], reached)
	}
	for _, k := range sortedKeys(r.Delivered) {
		if mk, ok := strings.CutPrefix(k, "marker:"); ok {
			d := r.Delivered[k]
			fmt.Fprintf(&b, "  marker %-40s first in request #%d msg %d (%s)\n", mk, d.RequestSeq, d.Message, d.Role)
		}
	}
	if len(r.TranscriptMarkers) > 0 {
		fmt.Fprintf(&b, "  markers persisted in transcript: %s\n", strings.Join(r.TranscriptMarkers, ", "))
	}
	if r.ClaudeVersion != PinnedVersion {
		fmt.Fprintf(&b, "  warning: claude %s, the harness is written for %s\n", r.ClaudeVersion, PinnedVersion)
	}
	for i, e := range r.Errors {
		if i == 12 {
			break
		}
		fmt.Fprintf(&b, "  REJECTED/ERROR: %s\n", cut(e, 300))
	}
	if r.MainRequests == 0 {
		fmt.Fprintf(&b, "  note: the model was never called (a hook blocked the prompt?) result: %q\n",
			cut(gjson.GetBytes(r.Result, "result").String(), 200))
	}
	return strings.TrimRight(b.String(), "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeReport writes a run's report as OUT/report.json, what the scripts
// and tests read.
func writeReport(out string, rep any) error {
	data, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "report.json"), append(data, '\n'), 0o644)
}
