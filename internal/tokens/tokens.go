// Package tokens counts cl100k_base tokens, offline.
//
// Claude's tokenizer is not public; cl100k is the stand-in every ccm
// estimate uses, and every figure that comes from here is an estimate.
//
// The counts are tiktoken's, but the text is split into chunks by a
// hand-written pre-tokenizer instead of tiktoken-go's regexp2 pattern,
// and the count of every chunk seen is cached: about 40 MB/s on a
// transcript's text instead of 2 MB/s, with no regular-expression engine
// in the binary. The vocabulary is the one tiktoken-go-loader embeds (no
// download); it is parsed on first use only, in about 30 ms, so hooks and
// commands that do not count tokens never pay for it. A test checks the
// counts against tiktoken-go's.
package tokens

// Warm loads the vocabulary ahead of use, e.g. in a goroutine while other
// work runs.
func Warm() error {
	once.Do(load)
	return loadErr
}

// Count returns the number of cl100k tokens in s. Special-token text such
// as "<|endoftext|>" is counted as ordinary text, never rejected. Invalid
// UTF-8 counts as U+FFFD, as tiktoken decodes it. It is safe for
// concurrent use.
func Count(s string) (int, error) {
	if err := Warm(); err != nil {
		return 0, err
	}
	return count(s), nil
}

// MustCount is Count for callers that have already called Warm
// successfully. It panics if the vocabulary cannot be loaded, which only
// a broken build can cause.
func MustCount(s string) int {
	n, err := Count(s)
	if err != nil {
		panic(err)
	}
	return n
}
