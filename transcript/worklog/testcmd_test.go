package worklog

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// testCommandRe is the expression isTestCommand writes out: the oracle.
var testCommandRe = regexp.MustCompile(`(^|[\s;&|(])(go test|pytest|python -m pytest|uv run pytest|npm (run )?test|yarn test|pnpm test|bun test|cargo test|make (test|check)|mvn test|gradle test|jest|vitest|rspec|tox|ctest|phpunit|mix test|dotnet test)\b`)

// TestIsTestCommand: the same answer as the regular expression on
// commands written to hit its edges and on random ones built from its
// pieces.
func TestIsTestCommand(t *testing.T) {
	cases := map[string]bool{
		"go test ./...":                    true,
		"cd x && go test -run X ./pkg":     true,
		"(go test)":                        true,
		"echo hi;pytest -q":                true,
		"npm run test":                     true,
		"npm run tests":                    false,
		"xgo test":                         false,
		"go testify":                       false,
		"go test_x":                        false,
		"make check-all":                   true, // '-' ends a word
		"pnpm test|tee log":                true,
		"ls\tjest":                         true,
		"cat toxic.txt":                    false,
		"python -m pytest tests/":          true,
		"uv run pytest":                    true,
		"gradle test\n":                    true,
		"go  test":                         false,
		"":                                 false,
		"git commit -m 'make test pass'":   false, // a quote is no separator
		"echo ctest2":                      false,
		"dotnet test && mix test && rspec": true,
	}
	for c, want := range cases {
		if got := isTestCommand(c); got != want || testCommandRe.MatchString(c) != want {
			t.Errorf("%q: got %v, regexp %v, want %v", c, got, testCommandRe.MatchString(c), want)
		}
	}
	pieces := []string{"go", " ", "test", "py", "pytest", "x", "_", "-", ";", "&", "|", "(", ")", "\t", "\n", "npm", "run",
		"make", "check", "jest", "vi", "tox", "c", "tests", "9", "é", "→", "python -m ", "uv run ", "mix", "dotnet"}
	r := rand.New(rand.NewSource(12))
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		for n := r.Intn(8); n >= 0; n-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		c := b.String()
		if got, want := isTestCommand(c), testCommandRe.MatchString(c); got != want {
			t.Fatalf("%q: got %v, the regexp says %v", c, got, want)
		}
	}
}
