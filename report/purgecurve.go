package report

import (
	"context"
	"io"

	"ccm/purge"
	"ccm/transcript"
)

// cumPoint is what the conversation held when a request was sent: the
// text it sends to the model (thinking excluded: the API drops earlier
// turns' thinking) and its images, since the last compact boundary.
type cumPoint struct {
	msgID  string
	text   int64
	images int
}

// cumulator adds up the text and images of the main conversation.
type cumulator struct {
	subagent bool
	text     int64
	images   int
	points   []cumPoint
}

// mark records the point a request starts at.
func (c *cumulator) mark(msgID string) {
	c.points = append(c.points, cumPoint{msgID: msgID, text: c.text, images: c.images})
}

// take adds a record.
func (c *cumulator) take(f *transcript.Facts) {
	if f == nil || !inConversation(f, c.subagent) {
		return
	}
	if f.IsCompactBoundary() {
		c.text, c.images = 0, 0 // the client sends nothing from before it
		return
	}
	c.text += f.TextBytes - f.ThinkingBytes
	c.images += int(f.Images)
}

// startPurgeCurve starts ccm purge's dry run and measures the file it would
// write the same way as the original, request by request: the text and
// images it would remove before each request are taken off the context
// that request recorded. Bytes become tokens at this session's own rate:
// the cl100k estimate of its resume context (tokens per byte of text),
// or 4 bytes a token when there is no text to measure. The function it
// returns waits for the dry run and draws the curve.
func startPurgeCurve(ctx context.Context, path string, opt purge.Options) func(s *Session) error {
	opt.DryRun = true
	opt.Tokens = true
	opt.Store = nil
	if opt.Now == nil {
		opt = mergeDefaults(opt)
	}
	pr, pw := io.Pipe()
	opt.DryRunOutput = pw
	type result struct {
		rep *purge.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := purge.File(ctx, path, opt)
		pw.CloseWithError(err) // nil closes with io.EOF
		done <- result{rep, err}
	}()
	measured := make(chan error, 1)
	cum := &cumulator{subagent: transcript.IsSubagentPath(path)}
	go func() {
		last := ""
		_, err := transcript.Build(pr, transcript.BuildOptions{Visit: func(_ transcript.Line, _ transcript.Record, f *transcript.Facts, _ *transcript.Sizes) error {
			if f != nil && isRequestLine(f, cum.subagent) {
				if f.MsgID() == "" || f.MsgID() != last {
					cum.mark(f.MsgID())
					last = f.MsgID()
				}
			}
			cum.take(f)
			return nil
		}})
		io.Copy(io.Discard, pr) // let the purge finish whatever Build left unread
		measured <- err
	}()
	return func(s *Session) error {
		buildErr := <-measured
		res := <-done
		if res.err != nil {
			return res.err
		}
		if buildErr != nil {
			return buildErr
		}
		s.applyPurge(res.rep, cum.points)
		return nil
	}
}

// applyPurge draws the second curve from the purge's report and the
// points measured in the file it would write.
func (s *Session) applyPurge(rep *purge.Report, after []cumPoint) {
	s.PurgeReport = rep
	perByte := 0.25
	if e := rep.TokensBefore; e != nil && e.Bytes > 0 {
		if t := e.Tokens - int64(e.Images)*transcript.ImageTokens; t > 0 {
			perByte = float64(t) / float64(e.Bytes)
		}
		s.Estimate = e
	}
	s.After = make([]int64, len(s.Turns))
	j := 0
	var saved int64
	for i, t := range s.Turns {
		if i < len(s.origCum) && j < len(after) && after[j].msgID == s.origCum[i].msgID {
			o, p := s.origCum[i], after[j]
			saved = int64(float64(o.text-p.text)*perByte) + int64(o.images-p.images)*transcript.ImageTokens
			j++
		}
		s.After[i] = max(0, t.Context()-max(0, saved))
	}
}

// mergeDefaults fills the options a caller left zero from ccm purge's
// defaults.
func mergeDefaults(opt purge.Options) purge.Options {
	d := purge.DefaultOptions()
	if opt.Threshold == 0 {
		opt.Threshold = d.Threshold
	}
	if opt.ImageMin == 0 {
		opt.ImageMin = d.ImageMin
	}
	if opt.RecentTurns == 0 {
		opt.RecentTurns = d.RecentTurns
	}
	if opt.KeepTurns == 0 {
		opt.KeepTurns = d.KeepTurns
	}
	opt.Now = d.Now
	opt.InferLive = true
	return opt
}
