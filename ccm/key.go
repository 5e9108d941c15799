package ccm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// Key names a blob by the hash of its content: "sha256:" and 64 lowercase hex
// digits for everything ccm stores, or "b2s:" and 16 hex digits (an 8-byte
// BLAKE2s digest) for blobs written by claude-context-hooks,
// claude-context-manager's successor. A Key obtained from ParseKey or KeyOf
// is always well-formed, so its hex part can be used as a file name without
// further checks.
type Key string

const (
	prefixSHA256 = "sha256:"
	prefixB2S    = "b2s:"
	hexSHA256    = 64
	hexB2S       = 16
)

// KeyOf returns the sha256 key of content.
func KeyOf(content []byte) Key {
	sum := sha256.Sum256(content)
	return Key(prefixSHA256 + hex.EncodeToString(sum[:]))
}

// ParseKey validates a key that comes from outside the store: a command-line
// argument, a stub, a metadata file or last_key. Only
// ^(sha256:[0-9a-f]{64}|b2s:[0-9a-f]{16})$ is accepted, so a key can never
// name a path outside the store ("../../settings" is rejected here, before
// any file is touched).
func ParseKey(s string) (Key, error) {
	var want int
	var digits string
	switch {
	case strings.HasPrefix(s, prefixSHA256):
		want, digits = hexSHA256, s[len(prefixSHA256):]
	case strings.HasPrefix(s, prefixB2S):
		want, digits = hexB2S, s[len(prefixB2S):]
	default:
		return "", fmt.Errorf("invalid key %s: want sha256:<64 hex digits> or b2s:<16 hex digits>", quoteShort(s))
	}
	if len(digits) != want || !isLowerHex(digits) {
		return "", fmt.Errorf("invalid key %s: want %d lowercase hex digits after %q", quoteShort(s), want, s[:len(s)-len(digits)])
	}
	return Key(s), nil
}

// Hex returns the hex digits of the key, which name its files.
func (k Key) Hex() string {
	if i := strings.IndexByte(string(k), ':'); i >= 0 {
		return string(k[i+1:])
	}
	return string(k)
}

// IsLegacy reports whether k is a b2s key of claude-context-hooks.
func (k Key) IsLegacy() bool { return strings.HasPrefix(string(k), prefixB2S) }

// Short returns the key cut to 20 characters, as claude-context-manager printed it.
func (k Key) Short() string {
	if len(k) <= 20 {
		return string(k)
	}
	return string(k[:20]) + "..."
}

// String returns the key as text.
func (k Key) String() string { return string(k) }

// newHash returns the hash that produced k, to verify content against it.
func (k Key) newHash() hash.Hash {
	if k.IsLegacy() {
		return newBlake2s64()
	}
	return sha256.New()
}

// NewHash returns the hash that names content by k's kind (SHA-256 or
// the 8-byte BLAKE2s), for a caller that checks content against a key
// from outside, with Matches.
func (k Key) NewHash() hash.Hash { return k.newHash() }

// Matches reports whether sum, the NewHash sum of some content, is k.
func (k Key) Matches(sum []byte) bool { return k.matches(sum) }

// matches reports whether a hash of content equals the key.
func (k Key) matches(sum []byte) bool {
	return hex.EncodeToString(sum) == k.Hex()
}

// KeyFromHex turns a file name's hex part back into a key, or reports false
// when the name is not one the store writes.
func KeyFromHex(h string) (Key, bool) {
	if !isLowerHex(h) {
		return "", false
	}
	switch len(h) {
	case hexSHA256:
		return Key(prefixSHA256 + h), true
	case hexB2S:
		return Key(prefixB2S + h), true
	}
	return "", false
}

func isLowerHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// quoteShort quotes untrusted text for an error message, cut so that a
// pasted megabyte does not become a megabyte of error.
func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
