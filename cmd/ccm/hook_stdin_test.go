package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestHookEndlessStdin: `ccm hook PostToolUse < /dev/zero` returns (it
// read forever before), exits 0 and prints nothing; so does a stdin that
// is never closed.
func TestHookEndlessStdin(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	t.Setenv("CCM_HOME", filepath.Join(dir, "ccm"))
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip("no /dev/zero")
	}
	defer zero.Close()
	var out, errb bytes.Buffer
	if code := ccmMain([]string{"ccm", "hook", "PostToolUse"}, zero, &out, &errb); code != 0 || out.Len() != 0 || errb.Len() != 0 {
		t.Errorf("/dev/zero: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // never closed while the hook runs
	w.WriteString(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash"`)
	if code := ccmMain([]string{"ccm", "hook", "PostToolUse"}, r, &out, &errb); code != 0 || out.Len() != 0 {
		t.Errorf("open stdin: exit %d, stdout %q", code, out.String())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "ccm", "logs", "hooks.log"))
	if !bytes.Contains(log, []byte("stdin larger than")) || !bytes.Contains(log, []byte("stdin not complete in time")) {
		t.Errorf("log:\n%s", log)
	}
}
