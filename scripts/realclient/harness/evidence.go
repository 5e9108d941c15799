// Evidence: this file reads what a session left behind, to tell which
// hook output reached the model: the marker in the requests sent to the
// mock API, the hook records in the transcript, and the events in ccm's
// hooks log.

package harness

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"regexp"
	"sort"

	"github.com/tidwall/gjson"
)

// delivery finds, for each event label and marker, the first main request
// whose texts (text blocks and tool_result contents) carry it.
func delivery(mains []Request, marker *regexp.Regexp) map[string]Delivery {
	first := map[string]Delivery{}
	for _, r := range mains {
		gjson.GetBytes(r.Body, "messages").ForEach(func(i, m gjson.Result) bool {
			role := m.Get("role").String()
			for _, t := range messageTexts(m.Get("content")) {
				for _, d := range deliveredRE.FindAllStringSubmatch(t, -1) {
					if _, ok := first["context:"+d[1]]; !ok {
						first["context:"+d[1]] = Delivery{r.Seq, int(i.Int()), role, d[2]}
					}
				}
				for _, mk := range marker.FindAllString(t, -1) {
					if _, ok := first["marker:"+mk]; !ok {
						first["marker:"+mk] = Delivery{RequestSeq: r.Seq, Message: int(i.Int()), Role: role}
					}
				}
			}
			return true
		})
	}
	return first
}

// messageTexts returns the texts of a message's content: a string, text
// blocks, and tool_result contents (a string, or the blocks' JSON).
func messageTexts(c gjson.Result) []string {
	if c.Type == gjson.String {
		return []string{c.String()}
	}
	var out []string
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			out = append(out, b.Get("text").String())
		case "tool_result":
			if rc := b.Get("content"); rc.Type == gjson.String {
				out = append(out, rc.String())
			} else {
				out = append(out, rc.Raw)
			}
		}
		return true
	})
	return out
}

// transcriptHookRecords counts a transcript's records by type (attachment,
// system and progress records by their subtype) and lists the markers
// persisted in it.
func transcriptHookRecords(path string, marker *regexp.Regexp) (map[string]int, []string) {
	counts := map[string]int{}
	found := map[string]bool{}
	f, err := os.Open(path)
	if err != nil {
		return counts, []string{}
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			r := gjson.ParseBytes(line)
			switch t := r.Get("type").String(); {
			case !gjson.ValidBytes(line) || !r.IsObject():
				counts["<bad line>"]++
			case t == "attachment":
				counts["attachment/"+r.Get("attachment.type").String()]++
			case t == "system":
				counts["system/"+r.Get("subtype").String()]++
			case t == "progress":
				counts["progress/"+r.Get("data.type").String()]++
			default:
				counts[t]++
			}
			for _, m := range marker.FindAll(line, -1) {
				found[string(m)] = true
			}
		}
		if err != nil {
			break
		}
	}
	markers := make([]string, 0, len(found))
	for m := range found {
		markers = append(markers, m)
	}
	sort.Strings(markers)
	return counts, markers
}

// hooksLogEvents counts the events of a hooks.jsonl that a test hook
// wrote into the output folder, if there is one.
func hooksLogEvents(path string) map[string]int {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	counts := map[string]int{}
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if ev := gjson.GetBytes(line, "event").String(); ev != "" {
			counts[ev]++
		}
		if err == io.EOF || err != nil {
			break
		}
	}
	return counts
}
