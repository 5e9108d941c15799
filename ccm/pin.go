package ccm

import (
	"context"
	"errors"
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

// SetPin sets key's pin level exactly (unlike Put, it can lower it) and
// returns the updated metadata. Level none clears the reason.
func (s *Store) SetPin(ctx context.Context, key Key, level PinLevel, reason string) (*Meta, error) {
	if _, err := ParseKey(string(key)); err != nil {
		return nil, err
	}
	if level < PinNone || level > PinHard {
		return nil, fmt.Errorf("invalid pin level %d", int(level))
	}
	if !s.Exists() {
		return nil, fmt.Errorf("%s: %w (no store at %s)", key, ErrNotFound, s.root)
	}
	l, err := s.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	files, err := s.findBlobs(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if files[0].Packed {
		p := PinInfo{Level: level}
		if level != PinNone {
			p = PinInfo{Level: level, Reason: reason, PinnedAt: s.now()}
		}
		if err := s.appendLocked(ctx, pinLine(key, s.now(), p), true); err != nil {
			return nil, err
		}
		return s.packMeta(key)
	}
	unlock, err := s.lockMeta(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, path, err := s.readMeta(key)
	if errors.Is(err, ErrNotFound) {
		m, err = metaFromFile(key, files[0])
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if level == PinNone {
		m.Pinned = PinInfo{Level: PinNone}
	} else {
		m.Pinned = PinInfo{Level: level, Reason: reason, PinnedAt: s.now()}
	}
	if err := s.writeMeta(path, m, nil); err != nil {
		return nil, err
	}
	return m, nil
}
