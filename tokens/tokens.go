// Package tokens counts cl100k_base tokens, offline.
//
// Claude's tokenizer is not public; cl100k is the stand-in every ccm
// estimate uses, and every figure that comes from here is an estimate.
// The vocabulary is embedded in the binary (no download) and initialised
// on first use only: it costs about 86 ms, so hooks and commands that do
// not count tokens never pay for it.
package tokens

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	once    sync.Once
	enc     *tiktoken.Tiktoken
	initErr error
)

func encoder() (*tiktoken.Tiktoken, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, initErr = tiktoken.GetEncoding("cl100k_base")
	})
	return enc, initErr
}

// Warm initialises the tokenizer ahead of use, e.g. in a goroutine while
// other work runs.
func Warm() error {
	_, err := encoder()
	return err
}

// Count returns the number of cl100k tokens in s. Special-token text such
// as "<|endoftext|>" is counted as ordinary text, never rejected.
func Count(s string) (int, error) {
	e, err := encoder()
	if err != nil {
		return 0, err
	}
	return len(e.EncodeOrdinary(s)), nil
}

// MustCount is Count for callers that have already called Warm
// successfully; it returns 0 if the tokenizer is unavailable.
func MustCount(s string) int {
	n, _ := Count(s)
	return n
}
