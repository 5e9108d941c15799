package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

func TestExploreOrphansCLI(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	for _, dry := range []bool{true, false} {
		var out, errb bytes.Buffer
		o := archiveOptions{globalOptions: globalOptions{ClaudeDir: os.Getenv("CLAUDE_CONFIG_DIR"), CacheDir: os.Getenv("CCM_CACHE_DIR"), Stdout: &out, Stderr: &errb},
			To: os.Getenv("U"), DryRun: dry, Verbose: true, Now: time.Now().Add(48 * time.Hour)}
		o.Select.OlderThan = 1000 * 24 * time.Hour
		err := runArchive(context.Background(), o)
		t.Logf("dry=%v err=%v\nout:\n%s\nerr:\n%s", dry, err, out.String(), errb.String())
	}
}
