package transcript

import (
	"fmt"
	"io"

	"github.com/tidwall/gjson"

	"ccm/tokens"
)

// ImageTokens is the flat estimate for one image: about what Claude
// charges for an image near the 1.15 megapixel size limit.
const ImageTokens = 1600

// Estimate is a cl100k token estimate of what a session sends on resume.
type Estimate struct {
	Tokens int64 `json:"tokens"`
	// Bytes is how much text the estimate covers.
	Bytes int64 `json:"bytes"`
	// Sampled is true when the text was larger than the budget and long
	// pieces were counted from a prefix and scaled.
	Sampled bool `json:"sampled"`
	Images  int  `json:"images"`
}

// EstimateBudget is how many bytes are tokenized exactly at most. cl100k
// runs at about 4 MB/s here, so this bounds the estimate to a fraction of
// a second; a context that Claude Code can still send is smaller anyway.
const EstimateBudget = 1 << 20

// Counter accumulates a token estimate record by record, tokenizing each
// text as it comes so that memory stays bounded by the longest line.
// When the records hold more than EstimateBudget bytes, each text is
// counted from a prefix of an equal share of the budget and scaled to its
// full length.
type Counter struct {
	est   Estimate
	limit int // longest text tokenized whole; -1 for no limit
	err   error
}

// NewCounter prepares a counter for nrec records of lineBytes bytes in all.
func NewCounter(lineBytes int64, nrec int) *Counter {
	c := &Counter{limit: -1}
	if lineBytes > EstimateBudget {
		c.limit = max(1024, EstimateBudget/(nrec+1))
	}
	return c
}

// Add counts the texts a record sends to the model.
func (c *Counter) Add(rec Record) {
	if c.err != nil {
		return
	}
	forEachText(rec, c.count, &c.est.Images)
}

func (c *Counter) count(s string) {
	if s == "" || c.err != nil {
		return
	}
	c.est.Bytes += int64(len(s))
	text := s
	if c.limit > 0 && len(text) > c.limit {
		text = text[:c.limit]
	}
	n, err := tokens.Count(text)
	if err != nil {
		c.err = fmt.Errorf("tokenizer: %w", err)
		return
	}
	if len(text) < len(s) {
		c.est.Sampled = true
		c.est.Tokens += int64(float64(n) * float64(len(s)) / float64(len(text)))
		return
	}
	c.est.Tokens += int64(n)
}

// Estimate returns the total, images included.
func (c *Counter) Estimate() Estimate {
	e := c.est
	e.Tokens += int64(e.Images) * ImageTokens
	return e
}

// Err reports a tokenizer failure.
func (c *Counter) Err() error { return c.err }

// EstimateContext counts the tokens of the chain's messages (everything
// after the last compact boundary, which is all the chain holds), reading
// their lines again from ra.
func (ix *Index) EstimateContext(ra io.ReaderAt, c *Chain, msgs []Message) (Estimate, error) {
	var lineBytes int64
	nrec := 0
	for _, m := range msgs {
		for _, i := range m.Recs {
			lineBytes += int64(ix.Recs[i].Size)
			nrec++
		}
	}
	ctr := NewCounter(lineBytes, nrec)
	var buf []byte
	for _, m := range msgs {
		for _, i := range m.Recs {
			f := &ix.Recs[i]
			if cap(buf) < f.Size {
				buf = make([]byte, f.Size)
			}
			b := buf[:f.Size]
			if _, err := ra.ReadAt(b, f.Offset); err != nil {
				return Estimate{}, fmt.Errorf("read line %d: %w", f.Line, err)
			}
			ctr.Add(NewRecord(b))
			if ctr.err != nil {
				return Estimate{}, ctr.err
			}
		}
	}
	return ctr.Estimate(), nil
}

// forEachText calls fn with every text a record sends to the model and
// counts its images.
func forEachText(rec Record, fn func(string), images *int) {
	content := rec.Content()
	if content.Type == gjson.String {
		fn(content.Str)
		return
	}
	content.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			fn(b.Get("text").Str)
		case "thinking":
			fn(b.Get("thinking").Str)
		case "tool_use":
			fn(b.Get("name").Str)
			fn(b.Get("input").Raw)
		case "image":
			*images++
		case "tool_result":
			inner := b.Get("content")
			if inner.Type == gjson.String {
				fn(inner.Str)
				break
			}
			inner.ForEach(func(_, ib gjson.Result) bool {
				switch ib.Get("type").Str {
				case "text":
					fn(ib.Get("text").Str)
				case "image":
					*images++
				}
				return true
			})
		}
		return true
	})
}
