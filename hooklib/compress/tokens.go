package compress

import "ccm/internal/tokens"

// Counter counts tokens. Compression decisions and the "never more tokens
// than the input" guard go through it, so tests can substitute a fake.
type Counter interface {
	Count(s string) int
}

// CL100K returns the cl100k_base token counter of package tokens. Its
// vocabulary is loaded on the first Count, never before: hook paths that
// do not compress never pay for it.
func CL100K() Counter { return cl100k{} }

type cl100k struct{}

func (cl100k) Count(s string) int { return tokens.MustCount(s) }
