package report

import (
	"os"
	"strings"

	"ccm/transcript"
)

// Sparkline ramps, lowest first. The ASCII one is for terminals and logs
// that cannot show Unicode.
var (
	unicodeRamp = []rune("▁▂▃▄▅▆▇█")
	asciiRamp   = []rune("_.-~=+*#")
)

// Sparkline draws values in at most width characters, one column per
// value, or the largest of each run of values sharing a column when there
// are more values than columns. Heights are scaled to top (the largest
// value when top is smaller), so a curve drawn against the model's window
// shows how close it came.
func Sparkline(values []int64, top int64, width int, ascii bool) string {
	if len(values) == 0 || width <= 0 {
		return ""
	}
	for _, v := range values {
		top = max(top, v)
	}
	ramp := unicodeRamp
	if ascii {
		ramp = asciiRamp
	}
	cols := min(width, len(values))
	var b strings.Builder
	for c := range cols {
		lo, hi := c*len(values)/cols, (c+1)*len(values)/cols
		var v int64
		for _, x := range values[lo:hi] {
			v = max(v, x)
		}
		k := 0
		if top > 0 && v > 0 {
			k = int(float64(v) * float64(len(ramp)) / float64(top+1))
		}
		b.WriteRune(ramp[min(k, len(ramp)-1)])
	}
	return b.String()
}

// Bar draws n against whole in width characters: full blocks and an
// eighth-block remainder, or '#' in ASCII. Anything above zero shows.
func Bar(n, whole int64, width int, ascii bool) string {
	if n <= 0 || whole <= 0 || width <= 0 {
		return ""
	}
	eighths := int(float64(min(n, whole)) * float64(width*8) / float64(whole))
	eighths = max(eighths, 1)
	if ascii {
		return strings.Repeat("#", max(1, (eighths+4)/8))
	}
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[r-1])
	}
	return s
}

// UnicodeTerminal tells whether the locale can show Unicode: the first
// of LC_ALL, LC_CTYPE and LANG that is set names UTF-8, and TERM is not
// "dumb" or "linux" (the Linux console lacks most block glyphs).
func UnicodeTerminal(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch getenv("TERM") {
	case "dumb", "linux":
		return false
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// inConversation tells the records of the conversation a file holds: the
// main one, or in a subagent's file (all sidechain records) the subagent's.
func inConversation(f *transcript.Facts, subagent bool) bool { return !f.Sidechain || subagent }

// isRequestLine tells an assistant line that records a request's usage.
func isRequestLine(f *transcript.Facts, subagent bool) bool {
	return inConversation(f, subagent) && f.Type == transcript.TypeAssistant && f.HasUsage && !f.APIError
}

// Contexts returns the context of every request of the conversation in
// file order, from an index's facts: one value per assistant message (one
// message.id, however many lines) that records usage, the last line's
// figure. subagent is true for a subagent's transcript, whose records are
// all sidechain records. ccm report's collector counts the same requests.
func Contexts(ix *transcript.Index, subagent bool) []int64 {
	var out []int64
	last := ""
	for i := range ix.Len() {
		f := ix.Rec(i)
		if !isRequestLine(f, subagent) {
			continue
		}
		if len(out) == 0 || f.MsgID() == "" || f.MsgID() != last {
			out = append(out, 0)
			last = f.MsgID()
		}
		out[len(out)-1] = f.Usage().Total()
	}
	return out
}
