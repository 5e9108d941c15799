package compress

import (
	"math/rand"
	"strings"
	"testing"
)

// Regression tests for the defects of agentihooks' preprocessor
// (docs/earlier-tools.md). Each meaning flip and identifier rewrite listed
// there is a case.

// tokenSamples are texts of the kinds on which agentihooks' level 3 raised
// token counts by 3-29 %.
var tokenSamples = map[string]string{
	"clearance": sampleClearance,
	"delegation": `# Delegation

Delegate implementation work to a subagent whenever the task touches more than three files.
Use the Explore agent for research and the general-purpose agent for implementation.
Always review the subagent's output before committing. Never let a subagent push to main.
Prefer Sonnet for implementation; reserve Opus for planning and architectural decisions.
When a subagent fails twice, take over the task yourself and explain what went wrong.
`,
	"claude-md": "# Global CLAUDE\n\n## Response Style\n\nBe concise. Answer the question first, then explain.\n\n## Tooling\n\n```go\nfunc main() {\n    fmt.Println(\"indented with four spaces\")\n}\n```\n\nRun `go test ./...` before every commit.\n",
	"adversarial": `Migrate the users from staging to production, not from production to staging.
Replace the staging database with the production database. Turn on the audit log.
Turn off verbose logging; do not turn it on in staging. Users can't opt in to the beta.
Be concise. Records must not be dropped. Delete *.log and *.tmp files.
Edit configuration.yaml and deploy/kubernetes/deployment.yaml, never .golangci.yml.
Call getContextFillPct() against localhost:5432 or https://example.com/authentication/configuration.
`,
}

func TestAggressiveNeverRaisesTokens(t *testing.T) {
	cl := CL100K()
	for name, s := range tokenSamples {
		in := cl.Count(s)
		for l := Light; l <= Aggressive; l++ {
			r := New(Options{Level: l}).Compress(s)
			if r.TokensOut > in || cl.Count(r.Text) != r.TokensOut {
				t.Errorf("%s at %s: %d -> %d tokens (recount %d)", name, l, in, r.TokensOut, cl.Count(r.Text))
			}
		}
	}
}

func TestFillerMeaningFlips(t *testing.T) {
	cases := []struct{ in, mustKeep string }{
		{"Migrate the users from staging to production, not from production to staging.", "to prod, not from prod to staging"},
		{"Migrate the users from staging to production, not from production to staging.", "from staging to"},
		{"Replace the staging database with the production database", "with prod"},
		{"Turn on the audit log", "Turn on"},
		{"Turn off verbose logging", "Turn off"},
		{"do not turn it on in staging", "turn it on in staging"},
		{"users can't opt in to the beta", "can't opt in to"},
		{"Be concise.", "Be concise."},
		{"The rows must not be dropped", "must not be dropped"},
	}
	for _, c := range cases {
		for l := Standard; l <= Aggressive; l++ {
			for _, out := range []string{compressAt(t, l, c.in), forced(l, c.in)} {
				if !strings.Contains(out, c.mustKeep) {
					t.Errorf("%s: %q -> %q lost %q", l, c.in, out, c.mustKeep)
				}
			}
		}
	}
}

func TestGlobsAreNotItalics(t *testing.T) {
	in := "Delete *.log and *.tmp files, keep **/*.go and test_*.py"
	for l := Light; l <= Aggressive; l++ {
		out := forced(l, in)
		for _, g := range []string{"*.log", "*.tmp", "**/*.go", "test_*.py"} {
			if !strings.Contains(out, g) {
				t.Errorf("%s: %q lost %q", l, out, g)
			}
		}
	}
}

func TestCodeFencesByteIdentical(t *testing.T) {
	fenceGo := "```go\nfunc main() {\n    if x {\n        return   // the end\n    }\n}\n```"
	fenceYAML := "~~~yaml\nkey:\n  - the  value\n\n\n\n  - is: on\n~~~"
	in := "Some text is here.\n\n" + fenceGo + "\n\nMore  text with   spaces.\n" + fenceYAML + "\n\n    indented code  is  kept\n"
	for l := Light; l <= Aggressive; l++ {
		for _, out := range []string{compressAt(t, l, in), forced(l, in)} {
			for _, f := range []string{fenceGo, fenceYAML, "    indented code  is  kept"} {
				if !strings.Contains(out, f) {
					t.Errorf("%s: fence changed:\n%s", l, out)
				}
			}
		}
	}
}

func TestIdentifiersAndFileNames(t *testing.T) {
	ids := []string{"configuration.yaml", "deploy/kubernetes/deployment.yaml", "hooks/observability/context_audit.py",
		".golangci.yml", "getContextFillPct()", "localhost:5432", "https://example.com/authentication/configuration",
		"snake_case_configuration", "../relative/path", "/absolute/path/to/file", "src/main.go"}
	in := "Read " + strings.Join(ids, " and ") + " carefully."
	for l := Light; l <= Aggressive; l++ {
		out := forced(l, in)
		for _, id := range ids {
			if !strings.Contains(out, id) {
				t.Errorf("%s: %q rewritten: %q", l, id, out)
			}
		}
	}
}

func TestCommandsUnchanged(t *testing.T) {
	cmds := []string{"kubectl get services", "kubectl rollout restart deployment/api", "helm upgrade payments --namespace payments"}
	for _, cmd := range cmds {
		in := "To restart it, run " + cmd + " after the deployment."
		for l := Light; l <= Aggressive; l++ {
			if out := forced(l, in); !strings.Contains(out, cmd) {
				t.Errorf("%s: command changed: %q", l, out)
			}
		}
	}
}

func TestProtectedWords(t *testing.T) {
	words := []string{"shouldn't", "deleted", "committed", "deploying", "Nothing", "none", `"restrict clearance"`, `"careful mode"`, "won't", "can't"}
	in := "You shouldn't say it was deleted, committed or deploying. Nothing is none of that; say \"restrict clearance\" or \"careful mode\" and it won't, can't matter."
	vc := New(Options{Level: Aggressive, Counter: vowelCounter{}}) // a counter that would reward every vowel removed
	for _, out := range []string{forced(Aggressive, in), vc.Compress(in).Text} {
		for _, w := range words {
			if !strings.Contains(out, w) {
				t.Errorf("%q altered: %q", w, out)
			}
		}
	}
}

func TestHeadersConsistent(t *testing.T) {
	in := "## Never push to main\n### Hard Block — ONLY secrets\n# Global CLAUDE\n# Git\nAlways commit.\n## Plain header\n"
	want := "[Never push to main]\n[Hard Block — ONLY secrets]\n[Global CLAUDE]\n[Git]\nAlways commit.\n[Plain header]\n"
	if got := forced(Light, in); got != want {
		t.Errorf("got %q", got)
	}
}

func TestNoActionVerbFromAbbreviation(t *testing.T) {
	for l := Standard; l <= Aggressive; l++ {
		if out := forced(l, "Delete the deployment"); strings.Contains(out, "deploy ") || strings.HasSuffix(out, "deploy") {
			t.Errorf("%s: %q", l, out)
		}
	}
}

func TestLeftovers(t *testing.T) {
	fm := "---\npriority: 1\ndescription: the rule\n---\n# Rule\ntext\n"
	if out := forced(Aggressive, fm); !strings.HasPrefix(out, "---\npriority: 1\ndescription: the rule\n---\n") {
		t.Errorf("YAML frontmatter treated as thematic breaks: %q", out)
	}
	if out := forced(Light, "an _em_ and __strong__ word"); out != "an em and strong word" {
		t.Errorf("underscore emphasis: %q", out)
	}
	if _, ok := ParseLevel("ultra"); ok {
		t.Error("an unknown level is accepted silently")
	}
	// Exclusions apply to the inflected forms that are long enough to matter.
	if !excluded("outputs") || !excluded("configs") || !excluded("users") {
		t.Error("exclusion list misses plural forms")
	}
}

// TestProtectionProperty builds random texts from protected and plain
// pieces and checks at every level that every protected piece survives,
// that code fences are byte-identical and that tokens never grow.
func TestProtectionProperty(t *testing.T) {
	protected := []string{"`go test ./...`", "\"quoted phrase here\"", "https://example.com/a/b?c=d", "main.go",
		"./scripts/run.sh", "camelCaseName", "snake_case_name", "ALL_CAPS_NAME", "512MiB", "30s", "don't",
		"deleted", "*.log", "never", "must", "kubectl get pods"}
	plain := []string{"the", "configuration", "is", "a", "production", "database", "with", "to", "in", "of",
		"service", "information", "operation", "careful", "development", "environment", ".", ",", "\n", "\n\n"}
	fences := []string{"\n```\nthe  code   is   here\n```\n", "\n~~~\n\tand\t here\n~~~\n"}
	rng := rand.New(rand.NewSource(7))
	cl := CL100K()
	for n := 0; n < 300; n++ {
		var b strings.Builder
		var want []string
		for k := 0; k < 40; k++ {
			switch p := rng.Intn(10); {
			case p < 2:
				w := protected[rng.Intn(len(protected))]
				want = append(want, w)
				b.WriteString(" " + w + " ")
			case p < 3 && k%10 == 0:
				f := fences[rng.Intn(len(fences))]
				want = append(want, f)
				b.WriteString(f)
			default:
				b.WriteString(" " + plain[rng.Intn(len(plain))])
			}
		}
		in := b.String()
		for l := Light; l <= Aggressive; l++ {
			r := New(Options{Level: l}).Compress(in)
			for _, w := range want {
				if !strings.Contains(r.Text, w) {
					t.Fatalf("%s lost %q\nin:  %q\nout: %q", l, w, in, r.Text)
				}
			}
			if cl.Count(r.Text) > cl.Count(in) {
				t.Fatalf("%s raised tokens on %q", l, in)
			}
		}
	}
}
