package purge

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/testutil"
	"ccm/sessions"
	"ccm/transcript"
)

// toolBytes maps every tool_result (by tool_use_id) and tool_use input
// (by id) of a transcript to its raw JSON.
func toolBytes(data []byte) map[string]string {
	out := map[string]string{}
	for _, l := range objectLines(data) {
		gjson.GetBytes(l, "message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_result":
				out["result "+b.Get("tool_use_id").Str] = b.Get("content").Raw
			case "tool_use":
				out["input "+b.Get("id").Str] = b.Get("input").Raw
			}
			return true
		})
	}
	return out
}

// TestCorpusMicroRestore: on every main session of the corpus, the
// default purge (window in results, old threshold, every
// microcompaction rule) stubs only through the store: ccm restore puts
// every tool output and tool input back byte for byte, and the rules
// fire on the corpus.
func TestCorpusMicroRestore(t *testing.T) {
	root := testutil.CopyCorpus(t)
	var files []string
	err := sessions.Walk(filepath.Join(root, "projects"), func(p string, _ fs.DirEntry) error {
		if !transcript.IsSubagentPath(p) && !strings.HasPrefix(filepath.Base(p), "agent-") {
			files = append(files, p)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stale, stubs int
	for _, p := range files {
		in := readFile(t, p)
		e := newEnv(t)
		o := e.opts()
		rep, _ := e.purge(p, o)
		stale += rep.StaleReads + rep.DuplicateOutputs + rep.OldTodos
		stubs += rep.Stubs
		o.Backup = BackupNone
		rr, err := restoreFile(context.Background(), p, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(rr.Missing) > 0 || rr.Restored != rep.Stubs {
			t.Errorf("%s: %d of %d stubs restored, %d missing", filepath.Base(p), rr.Restored, rep.Stubs, len(rr.Missing))
		}
		want, got := toolBytes(in), toolBytes(readFile(t, p))
		for k, v := range got {
			if w, ok := want[k]; ok && w != v {
				t.Errorf("%s: %s differs after restore", filepath.Base(p), k)
			}
		}
	}
	t.Logf("%d files: %d stubs, %d of them by the microcompaction rules", len(files), stubs, stale)
	if stale == 0 || stubs == 0 {
		t.Errorf("%d microcompaction stubs, %d stubs on the corpus: the rules never fired", stale, stubs)
	}
}
