package harness

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// transcriptInfo is what the resume driver needs to know of a transcript:
// its session id, and the user/assistant records whose content it looks
// for in the request.
type transcriptInfo struct {
	types      map[string]int
	sessionIDs map[string]int
	ua         []uaRecord
	chain      map[string]bool // uuids on a naive parentUuid walk from the last main-chain record
	chainBreak *ChainBreak
	sidechain  int
}

// ChainBreak is where the naive parent walk stopped at a missing parent.
type ChainBreak struct {
	Line          int    `json:"line"`
	MissingParent string `json:"missing_parent"`
}

type uaRecord struct {
	line      int
	uuid      string
	sidechain bool
	atoms     []atom
}

// atom is one fingerprint of a record's content: a text, a tool id, a
// thinking signature and start, an image's first bytes.
type atom struct{ kind, val string }

// analyzeTranscript reads a transcript once, line by line.
func analyzeTranscript(path string) (*transcriptInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info := &transcriptInfo{types: map[string]int{}, sessionIDs: map[string]int{}, chain: map[string]bool{}}
	type node struct {
		line   int
		parent string
	}
	byUUID := map[string]node{}
	br := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
				info.types["<bad line>"]++
			} else {
				r := gjson.ParseBytes(line)
				typ := r.Get("type").String()
				info.types[typ]++
				if sid := r.Get("sessionId").String(); sid != "" {
					info.sessionIDs[sid]++
				}
				uuid := r.Get("uuid").String()
				if uuid != "" {
					byUUID[uuid] = node{n, r.Get("parentUuid").String()}
				}
				if (typ == "user" || typ == "assistant") && r.Get("message").IsObject() {
					side := r.Get("isSidechain").Bool()
					if side {
						info.sidechain++
					}
					info.ua = append(info.ua, uaRecord{line: n, uuid: uuid, sidechain: side, atoms: atomsOf(r.Get("message.content"))})
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	// Walk parentUuid back from the last main-chain record.
	var last *uaRecord
	for i := range info.ua {
		if !info.ua[i].sidechain {
			last = &info.ua[i]
		}
	}
	if last == nil && len(info.ua) > 0 {
		last = &info.ua[len(info.ua)-1]
	}
	if last != nil {
		cur := last.uuid
		for cur != "" && !info.chain[cur] {
			info.chain[cur] = true
			p := byUUID[cur].parent
			if p == "" {
				break
			}
			if _, ok := byUUID[p]; !ok {
				info.chainBreak = &ChainBreak{Line: byUUID[cur].line, MissingParent: p}
				break
			}
			cur = p
		}
	}
	return info, nil
}

func atomsOf(c gjson.Result) []atom {
	if c.Type == gjson.String {
		if s := strings.TrimSpace(c.String()); s != "" {
			return []atom{{"text", s}}
		}
		return nil
	}
	var out []atom
	c.ForEach(func(_, b gjson.Result) bool {
		if !b.IsObject() {
			return true
		}
		switch t := b.Get("type").String(); t {
		case "text":
			if s := strings.TrimSpace(b.Get("text").String()); s != "" {
				out = append(out, atom{"text", s})
			}
		case "tool_use":
			out = append(out, atom{"tool_use", b.Get("id").String()})
		case "tool_result":
			out = append(out, atom{"tool_result", b.Get("tool_use_id").String()})
		case "thinking": // a signature alone is not unique in redacted fixtures
			out = append(out, atom{"thinking", b.Get("signature").String() + "|" + cut(b.Get("thinking").String(), 200)})
		case "redacted_thinking":
			out = append(out, atom{"redacted_thinking", b.Get("data").String()})
		case "image":
			out = append(out, atom{"image", cut(b.Get("source.data").String(), 256)})
		default:
			out = append(out, atom{"other", t})
		}
		return true
	})
	return out
}

// History says how much of a transcript's user/assistant records the
// request carries. A record is found when all its atoms are in the
// request; its text may also be a substring, since the client wraps and
// merges texts.
type History struct {
	UARecords         int   `json:"ua_records"`
	Found             int   `json:"found"`
	Partial           int   `json:"partial"`
	Missing           int   `json:"missing"`
	MissingSidechain  int   `json:"missing_sidechain"`
	Empty             int   `json:"empty"`
	OnChain           int   `json:"on_chain"`
	OnChainFound      int   `json:"on_chain_found"`
	EarliestFoundLine int   `json:"earliest_found_line"`
	MissingLines      []int `json:"missing_lines"`
}

func coverage(info *transcriptInfo, body []byte) History {
	idx := map[atom]bool{}
	var texts []string
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		c := m.Get("content")
		if c.Type == gjson.String {
			idx[atom{"text", strings.TrimSpace(c.String())}] = true
		} else {
			for _, a := range atomsOf(c) {
				idx[a] = true
			}
		}
		texts = append(texts, messageTexts(c)...)
		return true
	})
	blob := strings.Join(texts, "\x00")
	found := func(a atom) bool {
		return idx[a] || (a.kind == "text" && len(a.val) >= 8 && strings.Contains(blob, a.val))
	}
	h := History{UARecords: len(info.ua), MissingLines: []int{}}
	for _, r := range info.ua {
		onChain := info.chain[r.uuid]
		if onChain {
			h.OnChain++
		}
		hits := 0
		for _, a := range r.atoms {
			if found(a) {
				hits++
			}
		}
		switch {
		case len(r.atoms) == 0:
			h.Empty++
		case hits == 0:
			h.Missing++
			if r.sidechain {
				h.MissingSidechain++
			}
			if len(h.MissingLines) < 20 {
				h.MissingLines = append(h.MissingLines, r.line)
			}
		default:
			if hits == len(r.atoms) {
				h.Found++
			} else {
				h.Partial++
			}
			if h.EarliestFoundLine == 0 {
				h.EarliestFoundLine = r.line
			}
			if onChain {
				h.OnChainFound++
			}
		}
	}
	return h
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// pickSessionID is the id a transcript resumes under: the most common
// sessionId of its records, else its file name when that is a UUID, else
// a new UUID.
func pickSessionID(path string, info *transcriptInfo) string {
	best, n := "", 0
	for id, c := range info.sessionIDs {
		if c > n || (c == n && id < best) {
			best, n = id, c
		}
	}
	if best != "" {
		return best
	}
	if stem := strings.TrimSuffix(filepath.Base(path), ".jsonl"); uuidRE.MatchString(stem) {
		return stem
	}
	return newUUID()
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// copyFile copies src to dst byte for byte.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
