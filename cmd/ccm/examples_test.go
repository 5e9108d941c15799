package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestExamples walks the command tree: every command's --help ends with
// an EXAMPLES section of two or three lines, each running that command
// with flags it has.
func TestExamples(t *testing.T) {
	root := newApp(nil, io.Discard, io.Discard)
	var walk func(cmd *cli.Command, path []string)
	walk = func(cmd *cli.Command, path []string) {
		name := strings.Join(path, " ")
		ex := examples[name]
		if len(ex) < 2 || len(ex) > 3 {
			t.Errorf("%s: %d examples, want 2 or 3", name, len(ex))
		}
		for _, e := range ex {
			checkExample(t, name, e, root)
		}
		var out bytes.Buffer
		args := append(append([]string{}, path...), "--help")
		if code := ccmMain(args, strings.NewReader(""), &out, io.Discard); code != 0 {
			t.Errorf("%s --help: exit %d", name, code)
		}
		want := "\nEXAMPLES:\n   " + strings.Join(ex, "\n   ") + "\n"
		if len(ex) > 0 && !strings.HasSuffix(out.String(), want) {
			t.Errorf("%s --help does not end with its examples:\n%s", name, tail(out.String(), 300))
		}
		for _, sub := range cmd.Commands {
			walk(sub, append(append([]string{}, path...), sub.Name))
		}
	}
	walk(root, []string{root.Name})
	// Built by urfave/cli when the app runs.
	walk(&cli.Command{Name: "completion"}, []string{root.Name, "completion"})
	for name := range examples {
		if name != "ccm completion" && findCommand(root, strings.Fields(name)[1:]) == nil {
			t.Errorf("examples for %q, which is no command", name)
		}
	}
}

// checkExample finds the ccm command line in an example (after a pipe,
// an environment assignment or a cron schedule), checks that it names
// this command or one below it, and that every --flag it uses is one of
// that command's or a global one.
func checkExample(t *testing.T, name, ex string, root *cli.Command) {
	if name == "ccm completion" {
		return // not in the tree before the app runs; it has no flags
	}
	line, _, _ := strings.Cut(ex, "#")
	for _, part := range strings.Split(line, "|") {
		for _, seg := range strings.Split(part, "&&") {
			f := strings.Fields(seg)
			i := slices.Index(f, "ccm")
			if i < 0 {
				continue
			}
			words := f[i+1:]
			var sub []string
			for _, w := range words {
				if strings.HasPrefix(w, "-") || findCommand(root, append(sub, w)) == nil {
					break
				}
				sub = append(sub, w)
			}
			target := strings.Join(append([]string{"ccm"}, sub...), " ")
			if !strings.HasPrefix(target, name) {
				t.Errorf("%s: example %q runs %s", name, ex, target)
			}
			tf := append(flagNames(root), flagNames(findCommand(root, sub))...)
			for _, w := range words {
				if !strings.HasPrefix(w, "-") {
					continue
				}
				fl := strings.TrimLeft(w, "-")
				fl, _, _ = strings.Cut(fl, "=")
				if !slices.Contains(tf, fl) {
					t.Errorf("%s: example %q uses -%s, which %s does not have", name, ex, fl, target)
				}
			}
		}
	}
}

func findCommand(root *cli.Command, path []string) *cli.Command {
	c := root
	for _, p := range path {
		var next *cli.Command
		for _, s := range c.Commands {
			if s.Name == p {
				next = s
			}
		}
		if next == nil {
			return nil
		}
		c = next
	}
	return c
}

func flagNames(cmd *cli.Command) []string {
	names := []string{"help", "h"}
	for _, f := range cmd.Flags {
		names = append(names, f.Names()...)
	}
	return names
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
