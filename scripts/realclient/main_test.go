package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	out := fs.String("out", "", "")
	quiet := fs.Bool("quiet", false, "")
	pos, extra, err := parse(fs, []string{"--out", "D", "a.jsonl", "--quiet", "b", "--", "--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	if *out != "D" || !*quiet || !reflect.DeepEqual(pos, []string{"a.jsonl", "b"}) ||
		!reflect.DeepEqual(extra, []string{"--model", "m"}) {
		t.Fatalf("out %q quiet %v positional %q extra %q", *out, *quiet, pos, extra)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"resume"}, {"resume", "a", "b"},
		{"resume", "--config-dir", "d", "a.jsonl"}, {"session"}, {"session", "--settings", "s", "x"},
		{"validate"}, {"resume", "--timeout", "x", "a"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	logged := filepath.Join(dir, "001.json")
	os.WriteFile(good, []byte(`{"messages":[{"role":"user","content":"ping"}]}`), 0o600)
	os.WriteFile(bad, []byte(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[]}]}`), 0o600)
	// A mock log record: the body is inside.
	os.WriteFile(logged, []byte(`{"seq":1,"kind":"main","body":{"messages":[{"role":"user","content":"ping"}]}}`), 0o600)
	for _, c := range []struct {
		file, want string
		code       int
	}{{good, "VALID messages=1", 0}, {bad, "INVALID messages=2", 1}, {logged, "VALID messages=1", 0}} {
		var stdout bytes.Buffer
		code := run(context.Background(), []string{"validate", c.file, "--prompt", "ping"}, &stdout, io.Discard)
		if code != c.code || !strings.HasPrefix(stdout.String(), c.want) {
			t.Errorf("%s: exit %d, output %q", filepath.Base(c.file), code, stdout.String())
		}
	}
}
