// Package compress is ccm's compression preprocessor for text that hooks
// inject into a Claude Code session (rules, CLAUDE.md): it removes markdown
// formatting (level 1, light), filler words and long spellings (level 2,
// standard) and internal vowels (level 3, aggressive), as the earlier
// agentihooks preprocessor did, without its meaning flips.
//
// Everything that carries meaning is protected and comes out byte-identical:
// code fences and inline code (whitespace included), quoted phrases, URLs,
// file names, paths, identifiers (camelCase, snake_case, ALL_CAPS), numbers
// with their units, contractions, negation, assertion and action words with
// their inflections, glob patterns, CLI commands, and the small words that
// carry direction or negation next to a verb ("turn on", "from staging to
// production", "opt in to").
//
// Compression exists to save tokens, so tokens decide: level 3 removes
// vowels from a word only where cl100k counts fewer tokens for the result,
// and no level returns text with more tokens than its input; a level that
// would falls back to the one below.
package compress
