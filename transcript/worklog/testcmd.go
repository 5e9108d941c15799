package worklog

import "strings"

// testRunners are the test commands whose results are worth keeping.
var testRunners = []string{"go test", "pytest", "python -m pytest", "uv run pytest", "npm test", "npm run test",
	"yarn test", "pnpm test", "bun test", "cargo test", "make test", "make check", "mvn test", "gradle test",
	"jest", "vitest", "rspec", "tox", "ctest", "phpunit", "mix test", "dotnet test"}

// isTestCommand reports whether the shell command c runs a test runner:
// one of testRunners at the start of c or after white space, ';', '&',
// '|' or '(', and not followed by a letter, digit or '_'. It is the
// regular expression
//
//	(^|[\s;&|(])(go test|pytest|...|dotnet test)\b
//
// written out: compiling that expression was a twentieth of a PreCompact
// hook's extraction, and matching it a little more.
func isTestCommand(c string) bool {
	for _, r := range testRunners {
		for i := 0; ; {
			j := strings.Index(c[i:], r)
			if j < 0 {
				break
			}
			at := i + j
			end := at + len(r)
			if (at == 0 || isRunnerBefore(c[at-1])) && (end == len(c) || !isWordByte(c[end])) {
				return true
			}
			i = at + 1
		}
	}
	return false
}

// isRunnerBefore is [\s;&|(]: what may come right before a runner.
func isRunnerBefore(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\f', '\r', ';', '&', '|', '(':
		return true
	}
	return false
}

// isWordByte is \w, what \b tells apart from the rest.
func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
