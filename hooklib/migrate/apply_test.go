package migrate

import "testing"

// deleteItem takes an element out with its separator, so the lines around
// it keep their layout; an only element leaves "[]".
func TestDeleteItem(t *testing.T) {
	d := []byte("{\n  \"hooks\": {\n    \"A\": [\n      {\"x\": 1},\n      {\"y\": 2},\n      {\"z\": 3}\n    ],\n    \"B\": [ {\"q\": 1} ]\n  }\n}\n")
	for _, c := range []struct {
		path string
		i    int
		want string
	}{
		{"hooks.A", 0, "{\n  \"hooks\": {\n    \"A\": [\n      {\"y\": 2},\n      {\"z\": 3}\n    ],\n    \"B\": [ {\"q\": 1} ]\n  }\n}\n"},
		{"hooks.A", 1, "{\n  \"hooks\": {\n    \"A\": [\n      {\"x\": 1},\n      {\"z\": 3}\n    ],\n    \"B\": [ {\"q\": 1} ]\n  }\n}\n"},
		{"hooks.A", 2, "{\n  \"hooks\": {\n    \"A\": [\n      {\"x\": 1},\n      {\"y\": 2}\n    ],\n    \"B\": [ {\"q\": 1} ]\n  }\n}\n"},
		{"hooks.B", 0, "{\n  \"hooks\": {\n    \"A\": [\n      {\"x\": 1},\n      {\"y\": 2},\n      {\"z\": 3}\n    ],\n    \"B\": []\n  }\n}\n"},
	} {
		if got := string(deleteItem(append([]byte(nil), d...), c.path, c.i)); got != c.want {
			t.Errorf("%s.%d:\n%s\nwant\n%s", c.path, c.i, got, c.want)
		}
	}
}

// notPlainJSON names what keeps ccm from editing a settings file.
func TestNotPlainJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1}`:                       "",
		"\xef\xbb\xbf{\"a\": 1}":         "starts with a byte order mark",
		"{\n // c\n \"a\": 1\n}":         "has comments",
		`{"a": [1, 2,], "b": "x,]"}`:     "has trailing commas",
		"{/* c */ \"a\": [1,],}":         "has comments and trailing commas",
		`{"a": `:                         "not valid JSON",
		`[1]`:                            "not a JSON object",
		`{"url": "http://x//y", "a": 1}`: "",
	} {
		if got := notPlainJSON([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for cmd, want := range map[string]string{
		"python3 ~/.claude/hooks/intercept-bash.py":                         CCM,
		"cd /app && python -m hooks":                                        Agentihook,
		"uv run --no-project $HOME/.claude/hooks/x/pre_compact_preserve.py": CAF,
		"caf-hooks post-compact-verify":                                     CAF,
		"/usr/local/bin/ccm hook PreToolUse":                                "",
		"~/bin/my-own-guard.sh":                                             "",
	} {
		if got, _ := Classify(cmd); got != want {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}
