package compress

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The acceptance cases of agentihooks' preprocessor's suite
// (test_preprocessor.py), adapted where its expectations were its defects.

func compressAt(t *testing.T, l Level, in string) string {
	t.Helper()
	r := New(Options{Level: l}).Compress(in)
	if r.Err != nil {
		t.Fatalf("Compress at %s: %v", l, r.Err)
	}
	return r.Text
}

// forced runs a single level's transform without the token guard, to test
// what the transform itself does.
func forced(l Level, in string) string {
	c := New(Options{Level: l})
	for k := Light; k <= l; k++ {
		in = c.apply(k, in)
	}
	return in
}

func TestProtectedSurviveEveryLevel(t *testing.T) {
	cases := []struct{ in, keep string }{
		{"Text before\n```sh\nkubectl delete pod x\n  indented   line\n```\nafter", "```sh\nkubectl delete pod x\n  indented   line\n```"},
		{"Run `kubectl delete` in the production namespace", "`kubectl delete`"},
		{"You should never do the thing", "never"},
		{"The agent will push and delete the service", "push"},
		{"The agent will push and delete the service", "delete"},
		{"Set the CONTEXT_REFRESH_MAX_CHARS variable", "CONTEXT_REFRESH_MAX_CHARS"},
		{"Every 20 prompts with a budget of 8000 characters", "20"},
		{"Every 20 prompts with a budget of 8000 characters", "8000"},
		{"The file at ~/.agentihooks/.env is read", "~/.agentihooks/.env"},
		{"Then run kubectl delete on it", "kubectl delete"},
		{"You always must use only the configuration", "always"},
		{"You always must use only the configuration", "must"},
		{"You always must use only the configuration", "only"},
	}
	for _, c := range cases {
		for l := Light; l <= Aggressive; l++ {
			for _, out := range []string{compressAt(t, l, c.in), forced(l, c.in)} {
				if !strings.Contains(out, c.keep) {
					t.Errorf("level %s: %q lost %q: %q", l, c.in, c.keep, out)
				}
			}
		}
	}
}

func TestLight(t *testing.T) {
	cases := []struct{ in, want string }{
		{"## Section Title\nbody", "[Section Title]\nbody"},
		{"before\n```mermaid\ngraph TD\n  A-->B\n```\nafter", "before\n[diagram removed]\nafter"},
		{"an **important** and *critical* rule", "an important and critical rule"},
		{"one\n\n---\n\ntwo", "one\n\ntwo"},
		{"| Name | Value |\n|------|:-----:|\n| foo | bar |\n", "Name: foo | Value: bar\n"},
		{"__strong__ and _em_ text", "strong and em text"},
	}
	for _, c := range cases {
		if got := forced(Light, c.in); got != c.want {
			t.Errorf("light(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A wide table whose flattened rows would repeat long headers stays a
	// table: flattening it would cost tokens.
	wide := "| Configuration parameter name | Documented default value | Meaning |\n|---|---|---|\n| a | 1 | x |\n| b | 2 | y |\n| c | 3 | z |\n"
	if got := forced(Light, wide); got != wide {
		t.Errorf("wide table flattened at a token cost: %q", got)
	}
}

func TestStandard(t *testing.T) {
	got := compressAt(t, Standard, "The system is configured to use the Redis database")
	if strings.Contains(got, " is ") || strings.Contains(got, " to ") || !strings.Contains(got, "Redis") || !strings.Contains(got, "db") {
		t.Errorf("got %q", got)
	}
	got = compressAt(t, Standard, "Check the configuration of every production deployment on kubernetes")
	for _, want := range []string{"cfg", "prod"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q: no %q", got, want)
		}
	}
	// The earlier suite expected "k8s" here. For cl100k " kubernetes" is 2
	// tokens and " k8s" 3, so ccm keeps the word: abbreviations must save
	// tokens, not characters.
	if !strings.Contains(got, "kubernetes") {
		t.Errorf("%q: kubernetes abbreviated although k8s costs more tokens", got)
	}
	got = compressAt(t, Standard, "authentication is required")
	if !strings.Contains(got, "auth") || strings.Contains(got, "authentication") {
		t.Errorf("got %q", got)
	}
}

// vowelCounter counts characters, so that every vowel removed saves: it
// tests the level-3 transform apart from cl100k's verdict on it.
type vowelCounter struct{}

func (vowelCounter) Count(s string) int { return len(s) }

func TestAggressive(t *testing.T) {
	c := New(Options{Level: Aggressive, Counter: vowelCounter{}})
	got := c.Compress("the instruction regarding protection is collaborative").Text
	if !strings.Contains(got, "instrctn") || !strings.Contains(got, "prtctn") {
		t.Errorf("long words not shortened: %q", got)
	}
	got = c.Compress("a red fox ran far").Text
	if got != "a red fox ran far" {
		t.Errorf("short words broken: %q", got)
	}
	got = c.Compress("check the errors, orders and issues again").Text
	for _, w := range []string{"errors", "orders", "issues"} {
		if !strings.Contains(got, w) {
			t.Errorf("%s disemvowelled: %q", w, got)
		}
	}
	// With cl100k almost no common word gets cheaper without its vowels.
	in := "The instruction regarding protection is collaborative"
	r := New(Options{Level: Aggressive}).Compress(in)
	if r.TokensOut > r.TokensIn {
		t.Errorf("aggressive raised tokens %d -> %d", r.TokensIn, r.TokensOut)
	}
}

func TestSafetyMatrix(t *testing.T) {
	cases := []struct {
		in   string
		keep []string
	}{
		{"never push to main", []string{"never", "push"}},
		{"You must not delete production pods", []string{"must", "not", "delete"}},
		{"Keep CONTEXT_REFRESH_MAX_CHARS at 8000", []string{"CONTEXT_REFRESH_MAX_CHARS", "8000"}},
		{"Do not run `kubectl delete pod` by hand", []string{"`kubectl delete pod`"}},
		{"The TOKEN_REDIS_TTL is 3600", []string{"TOKEN_REDIS_TTL", "3600"}},
		{"The path ~/.agentihooks/.env must exist", []string{"must", "~/.agentihooks/.env"}},
		{"You don't force push", []string{"don't", "force", "push"}},
		{"You should always use --dry-run first", []string{"always", "--dry-run"}},
		{"There is strictly no rm -rf in production", []string{"strictly", "no", "rm -rf"}},
	}
	for _, c := range cases {
		for l := Light; l <= Aggressive; l++ {
			for _, out := range []string{compressAt(t, l, c.in), forced(l, c.in)} {
				for _, k := range c.keep {
					if !strings.Contains(out, k) {
						t.Errorf("level %s: %q lost %q: %q", l, c.in, k, out)
					}
				}
			}
		}
	}
}

func TestPipeline(t *testing.T) {
	if got := compressAt(t, Off, sampleClearance); got != sampleClearance {
		t.Errorf("level off changed the text")
	}
	cl := CL100K()
	prev := cl.Count(sampleClearance)
	prevChars := len(sampleClearance)
	for l := Light; l <= Aggressive; l++ {
		r := New(Options{Level: l}).Compress(sampleClearance)
		// The earlier suite required strictly fewer characters per level;
		// what matters is tokens, and no level may add any.
		if r.TokensOut > prev {
			t.Errorf("level %s: %d tokens, level below %d", l, r.TokensOut, prev)
		}
		if len(r.Text) > prevChars {
			t.Errorf("level %s: %d characters, level below %d", l, len(r.Text), prevChars)
		}
		prev, prevChars = r.TokensOut, len(r.Text)
	}
	out := compressAt(t, Aggressive, "Never run kubectl delete or docker rm; push only after review.\n")
	for _, w := range []string{"Never", "kubectl", "docker", "push", "delete"} {
		if !strings.Contains(out, w) {
			t.Errorf("aggressive lost %q: %q", w, out)
		}
	}
}

func TestRatio(t *testing.T) {
	if r := Ratio("abcdef", "abc"); r != 0.5 {
		t.Errorf("Ratio = %v", r)
	}
	if Ratio("abc", "abc") != 1 || Ratio("", "") != 1 {
		t.Error("Ratio of equal strings is not 1")
	}
}

func TestEdgeInputs(t *testing.T) {
	for l := Off; l <= Aggressive; l++ {
		if got := compressAt(t, l, ""); got != "" {
			t.Errorf("empty input at %s gave %q", l, got)
		}
	}
	code := "```\nkubectl apply -f the/file.yaml\nkubectl rollout status deployment/api\n```\n"
	if got := compressAt(t, Aggressive, code); got != code {
		t.Errorf("all-code input changed: %q", got)
	}
	prot := "NEVER_EVER 8000 `x` ~/.claude/rules"
	if got := compressAt(t, Aggressive, prot); got != prot {
		t.Errorf("all-protected input changed: %q", got)
	}
}

func TestFailingTransformReturnsInput(t *testing.T) {
	testHook = func() { panic("mask builder failed") }
	defer func() { testHook = nil }()
	r := New(Options{Level: Standard}).Compress(sampleClearance)
	if r.Text != sampleClearance || r.Err == nil {
		t.Errorf("want the input back and an error, got err=%v", r.Err)
	}
}

func TestParseLevel(t *testing.T) {
	cases := []struct {
		in   string
		want Level
		ok   bool
	}{
		{"off", Off, true}, {"light", Light, true}, {"standard", Standard, true},
		{"aggressive", Aggressive, true}, {"AGGRESSIVE", Aggressive, true}, {"2", Standard, true},
		{"invalid", Off, false}, {"", Off, false},
	}
	for _, c := range cases {
		if got, ok := ParseLevel(c.in); got != c.want || ok != c.ok {
			t.Errorf("ParseLevel(%q) = %v, %v", c.in, got, ok)
		}
	}
}

func TestDictionary(t *testing.T) {
	if n := BuiltinDict().Len(); n != 54 || len(builtinDict()) != BuiltinDictSize {
		t.Fatalf("built-in dictionary has %d entries", n)
	}
	dir := t.TempDir()
	user := filepath.Join(dir, "abbr.json")
	os.WriteFile(user, []byte(`{"_version":1,"entries":{"observability":"o11y","database":"DB-USER"}}`), 0o600)
	d, err := LoadDict(user)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Lookup("database"); v != "DB-USER" {
		t.Errorf("user entry did not win: %q", v)
	}
	if v, _ := d.Lookup("production"); v != "prod" {
		t.Errorf("built-in entry lost: %q", v)
	}
	if d.Fingerprint() == BuiltinDict().Fingerprint() {
		t.Error("fingerprint ignores the user's entries")
	}
	for name, body := range map[string]string{"bad.json": "{not json", "noentries.json": `{"x":1}`, "num.json": `{"entries":{"a":1}}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if d, err := LoadDict(p); err == nil || d.Len() != 54 {
			t.Errorf("%s: err=%v len=%d, want an error and the built-in dictionary", name, err, d.Len())
		}
	}
	if _, err := LoadDict(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
