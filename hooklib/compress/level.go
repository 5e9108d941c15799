package compress

import (
	"fmt"
	"strings"
)

// Level is a compression level. Each level includes the ones below it.
type Level int

// The four levels of agentihooks' preprocessor, with its names.
const (
	Off        Level = iota // passthrough
	Light                   // markdown formatting removed
	Standard                // plus filler words and abbreviations
	Aggressive              // plus internal vowels, where that saves tokens
)

var levelNames = [...]string{"off", "light", "standard", "aggressive"}

// String returns the level's name ("off", "light", "standard", "aggressive").
func (l Level) String() string {
	if l >= Off && l <= Aggressive {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// ParseLevel maps a name (case-insensitive) or a digit 0-3 to a Level.
// Anything else maps to Off with ok false: an unknown level must never
// compress more than the user asked for, but callers should say so rather
// than switch compression off silently as agentihooks did.
func ParseLevel(s string) (l Level, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, name := range levelNames {
		if s == name || s == string(rune('0'+i)) {
			return Level(i), true
		}
	}
	return Off, false
}
