package transcript

import (
	"math"

	"github.com/tidwall/gjson"
)

// ImageTokens is the flat estimate for one image: about what Claude
// charges for an image near the 1.15 megapixel size limit.
const ImageTokens = 1600

// Estimate is a cl100k token estimate of what a session sends on resume.
type Estimate struct {
	Tokens int64 `json:"tokens"`
	// Bytes is how much text the estimate covers.
	Bytes int64 `json:"bytes"`
	// Sampled is true when the text was larger than the budget: a sample
	// of it was counted and the count scaled to all of it.
	Sampled bool `json:"sampled"`
	Images  int  `json:"images"`
}

// EstimateBudget is about how many bytes of text are tokenized exactly;
// beyond it a sample is counted and scaled. Counting runs at about
// 40 MB/s a core once warm (package tokens), but a purge waits for its
// estimates before it returns, and the sample is within a few percent
// (TestSampledEstimate bounds its error at 10 %; 0.8-4 % on its
// sessions). Counts up to about 60k tokens are exact.
const EstimateBudget = 256 << 10

// Counter accumulates a token estimate record by record as a purge writes
// them (their sizes are not known beforehand, unlike EstimateContext's).
// It keeps the texts to tokenize, never the records: every text until
// EstimateBudget bytes are kept (one longer than that as windows,
// appendSplit), then every k-th text only (at most sampleText of each),
// whose tokens per byte scale the rest. Estimate
// tokenizes them at the end on every core, so the vocabulary (100k
// strings that every garbage collection marks) need not be loaded while
// the purge runs.
type Counter struct {
	est       Estimate
	lineBytes int64 // bytes of all the records to come, to pick the stride
	budget    int64 // EstimateBudget; tests raise it to count exactly
	stride    int   // 0 while counting exactly
	n         int   // texts seen while sampling
	restBytes int64 // the bytes the sample stands for
	pieces    []textPiece
}

// NewCounter prepares a counter for records of lineBytes bytes in all.
func NewCounter(lineBytes int64, nrec int) *Counter {
	return &Counter{lineBytes: lineBytes, budget: EstimateBudget}
}

// Add takes the texts a record sends to the model.
func (c *Counter) Add(rec Record) {
	forEachText(rec, c.take, &c.est.Images)
}

// take keeps one raw text: a JSON string (counted as its decoded text) or
// a tool input object (counted as written). While sampling, skipped texts
// are only measured (raw length less the quotes), never decoded.
func (c *Counter) take(raw []byte) {
	if textSize(raw) == 0 {
		return
	}
	if c.stride == 0 && c.est.Bytes > c.budget {
		c.stride = int(max(2, (c.lineBytes+c.budget-1)/c.budget))
	}
	if c.stride == 0 {
		s := decodeText(raw)
		c.est.Bytes += int64(len(s))
		c.pieces = appendSplit(c.pieces, s, c.budget)
		return
	}
	c.restBytes += textSize(raw)
	c.n++
	if c.n%c.stride != 1 {
		return
	}
	if len(raw) > sampleText {
		raw = raw[:sampleText]
	}
	c.pieces = append(c.pieces, textPiece{s: decodeText(raw), owner: 0})
}

// decodeText decodes a raw JSON string, closing one that a sample cut
// short; anything else is counted as written.
func decodeText(raw []byte) string {
	if raw[0] != '"' {
		return string(raw)
	}
	if len(raw) == 1 || raw[len(raw)-1] != '"' || raw[len(raw)-2] == '\\' {
		raw = append(raw[:len(raw):len(raw)], '"')
	}
	return gjson.ParseBytes(raw).String()
}

// Estimate tokenizes what the counter kept and returns the total, images
// included.
func (c *Counter) Estimate() (Estimate, error) {
	counts, err := countPieces(c.pieces)
	if err != nil {
		return Estimate{}, err
	}
	e := c.est
	var sampleBytes, sampleTokens int64
	var exact float64
	for i, p := range c.pieces {
		if p.owner < 0 {
			exact += p.tokens(counts[i])
			e.Sampled = e.Sampled || p.scale > 0
		} else {
			sampleBytes += int64(len(p.s))
			sampleTokens += int64(counts[i])
		}
	}
	e.Tokens = int64(math.Round(exact))
	if c.stride > 0 && sampleBytes > 0 {
		e.Sampled = true
		e.Bytes += c.restBytes
		e.Tokens += int64(float64(c.restBytes) * float64(sampleTokens) / float64(sampleBytes))
	}
	e.Tokens += int64(e.Images) * ImageTokens
	return e, nil
}

// forEachText calls fn with every text a record sends to the model, as a
// raw JSON value (a string still escaped, or a tool input object), and
// counts its images. It walks the raw bytes, so a text the counter does
// not sample is never decoded, and trusts them to be valid JSON (a line
// the index validated, or one a purge wrote), so a large value is crossed
// without being validated again.
func forEachText(rec Record, fn func(raw []byte), images *int) {
	b := rec.raw
	members(b, func(k, msg []byte) bool {
		if string(k) != "message" {
			return true
		}
		members(msg, func(k2, content []byte) bool {
			if string(k2) != "content" {
				return true
			}
			if len(content) > 0 && content[0] == '"' {
				fn(content)
				return false
			}
			elements(content, func(blk []byte) {
				var typ string
				var text, thinking, name, input, inner []byte
				members(blk, func(k3, v []byte) bool {
					switch string(k3) {
					case "type":
						typ = str(v)
					case "text":
						text = v
					case "thinking":
						thinking = v
					case "name":
						name = v
					case "input":
						input = v
					case "content":
						inner = v
					}
					return true
				})
				switch typ {
				case "text":
					fn(text)
				case "thinking":
					fn(thinking)
				case "tool_use":
					fn(name)
					fn(input)
				case "image":
					*images++
				case "tool_result":
					if len(inner) > 0 && inner[0] == '"' {
						fn(inner)
						return
					}
					elements(inner, func(ib []byte) {
						var ityp string
						var itext []byte
						members(ib, func(k4, v []byte) bool {
							switch string(k4) {
							case "type":
								ityp = str(v)
							case "text":
								itext = v
							}
							return true
						})
						switch ityp {
						case "text":
							fn(itext)
						case "image":
							*images++
						}
					})
				}
			})
			return false
		})
		return false
	})
}
