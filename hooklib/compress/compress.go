package compress

import (
	"fmt"
	"strings"
)

// Version changes whenever a change to the transforms can change an
// output; callers that cache outputs put it in their keys.
const Version = 1

// Options configure a Compressor.
type Options struct {
	Level   Level
	Dict    *Dict   // nil: the built-in dictionary
	Counter Counter // nil: cl100k
}

// Compressor compresses text. It is safe for concurrent use; it keeps its
// level-3 decisions for its lifetime.
type Compressor struct {
	level   Level
	dict    *Dict
	counter Counter
	vowels  vowelDecisions
}

// New returns a Compressor.
func New(o Options) *Compressor {
	c := &Compressor{level: o.Level, dict: o.Dict, counter: o.Counter}
	if c.dict == nil {
		c.dict = BuiltinDict()
	}
	if c.counter == nil {
		c.counter = CL100K()
	}
	return c
}

// Level returns the level the compressor was asked for.
func (c *Compressor) Level() Level { return c.level }

// Fingerprint identifies everything that determines an output besides the
// input: the algorithm version, the level and the dictionary.
func (c *Compressor) Fingerprint() string {
	return fmt.Sprintf("v%d-%s-%s", Version, c.level, c.dict.Fingerprint())
}

// Result is the outcome of one compression.
type Result struct {
	Text      string
	Level     Level // the level whose output was kept (lower than asked if a higher one cost tokens)
	TokensIn  int   // cl100k tokens of the input (0 at level off)
	TokensOut int
	Err       error // set if a transform failed; Text is then the input
}

// testHook, when set by a test, runs inside Compress to simulate a failing
// transform.
var testHook func()

// Compress runs the levels up to the compressor's level and returns the
// output with the fewest tokens (the highest level on a tie). The input is
// never beaten on tokens by its own output, so no level can make text more
// expensive. A transform that panics is contained: the input comes back
// unchanged with Err set.
func (c *Compressor) Compress(text string) (res Result) {
	res = Result{Text: text, Level: Off}
	if c.level <= Off || text == "" {
		return res
	}
	defer func() {
		if r := recover(); r != nil {
			res = Result{Text: text, Level: Off, Err: fmt.Errorf("compress: %v", r)}
		}
	}()
	if testHook != nil {
		testHook()
	}
	res.TokensIn = c.counter.Count(text)
	res.TokensOut = res.TokensIn
	cur := text
	for l := Light; l <= c.level && l <= Aggressive; l++ {
		cur = c.apply(l, cur)
		if n := c.counter.Count(cur); n <= res.TokensOut {
			res.Text, res.Level, res.TokensOut = cur, l, n
		}
	}
	return res
}

// apply runs one level's transforms on text that has been through the
// levels below.
func (c *Compressor) apply(l Level, text string) string {
	lines := splitLines(text)
	switch l {
	case Light:
		lines = light(lines, c.counter)
	case Standard:
		for i := range lines {
			if lines[i].kind == prose && lines[i].text != "" {
				lines[i].text = standardLine(lines[i].text, c.dict, c.counter)
			}
		}
	case Aggressive:
		for i := range lines {
			if lines[i].kind == prose && lines[i].text != "" {
				lines[i].text = aggressiveLine(lines[i].text, c.counter, &c.vowels)
			}
		}
	}
	return joinLines(lines, true)
}

// Ratio returns len(after)/len(before) in characters; 1 for two empty
// strings. It matches agentihooks' helper.
func Ratio(before, after string) float64 {
	b := len([]rune(before))
	if b == 0 {
		return 1
	}
	return float64(len([]rune(after))) / float64(b)
}

// Stats summarises a compression for people: characters and tokens before
// and after.
func Stats(before string, r Result) string {
	cb, ca := len([]rune(before)), len([]rune(r.Text))
	return fmt.Sprintf("level %s: %d -> %d characters (%s), %d -> %d cl100k tokens (%s)",
		r.Level, cb, ca, pct(cb, ca), r.TokensIn, r.TokensOut, pct(r.TokensIn, r.TokensOut))
}

func pct(before, after int) string {
	if before == 0 {
		return "0.0%"
	}
	p := 100 * float64(after-before) / float64(before)
	s := fmt.Sprintf("%+.1f%%", p)
	return strings.Replace(s, "+0.0%", "0.0%", 1)
}
