package ccm

import (
	"fmt"
	"strings"
)

// PinLevel says how strongly a blob is protected from pruning. Levels are
// ordered: PinNone < PinSoft < PinHard.
type PinLevel int

const (
	// PinNone blobs are pruned first, by age, size or when unreferenced.
	PinNone PinLevel = iota
	// PinSoft blobs are pruned only by a size limit, after every unpinned
	// blob is gone.
	PinSoft
	// PinHard blobs are never pruned automatically.
	PinHard
)

// String returns "none", "soft" or "hard".
func (l PinLevel) String() string {
	switch l {
	case PinNone:
		return "none"
	case PinSoft:
		return "soft"
	case PinHard:
		return "hard"
	}
	return fmt.Sprintf("PinLevel(%d)", int(l))
}

// ParsePinLevel parses "none", "soft" or "hard" (any case). The empty
// string is "none", as claude-context-manager's metadata has it for unpinned blobs.
func ParsePinLevel(s string) (PinLevel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return PinNone, nil
	case "soft":
		return PinSoft, nil
	case "hard":
		return PinHard, nil
	}
	return PinNone, fmt.Errorf("invalid pin level %s: want none, soft or hard", quoteShort(s))
}

// MarshalText writes the level as in metadata files.
func (l PinLevel) MarshalText() ([]byte, error) {
	if l < PinNone || l > PinHard {
		return nil, fmt.Errorf("invalid pin level %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText reads a level written by MarshalText or by claude-context-manager.
func (l *PinLevel) UnmarshalText(b []byte) error {
	v, err := ParsePinLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
