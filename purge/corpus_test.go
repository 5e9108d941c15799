package purge

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/testutil"
	"ccm/sessions"
	"ccm/transcript"
)

// TestCorpus: every real transcript of the shared corpus, subagent files
// included, purges (with each option set, a live session's among them) to
// a file that passes ccm check, keeps every user
// prompt of its active chain, changes lines only as a purge may, and
// purges again to the same bytes.
func TestCorpus(t *testing.T) {
	for _, v := range []struct {
		name string
		set  func(*Options)
	}{
		{"default", func(*Options) {}},
		{"keep-thinking", func(o *Options) { o.KeepThinking = true }},
		{"repair-only", func(o *Options) { o.RepairOnly = true }},
		{"aggressive", func(o *Options) { o.RecentTurns = 0; o.Threshold = 200 }},
		{"no-store", func(o *Options) { o.NoStore = true }},
		{"live", func(o *Options) { o.Live = true }},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			root := testutil.CopyCorpus(t)
			files := corpusTranscripts(t, root)
			if len(files) < 6 {
				t.Fatalf("found %d corpus files, want the 6 of SOURCES.md", len(files))
			}
			subagents := 0
			for _, p := range files {
				rel, _ := filepath.Rel(root, p)
				t.Run(strings.ReplaceAll(rel, "/", "|"), func(t *testing.T) {
					in := readFile(t, p)
					sub := transcript.IsSubagentPath(p)
					if sub {
						subagents++
					}
					e := newEnv(t)
					o := e.opts()
					v.set(&o)
					e.purge(p, o)
					e.invariants(in, p, o, sub)
				})
			}
			if subagents < 3 {
				t.Errorf("%d subagent files purged, want 3", subagents)
			}
		})
	}
}

// TestCorpusSavings: on the 2.1.39 corpus file the default purge drops the
// progress records (two thirds of the lines) and stubs large outputs.
func TestCorpusSavings(t *testing.T) {
	root := testutil.CopyCorpus(t)
	p := filepath.Join(root, testutil.Spotter)
	in := readFile(t, p)
	e := newEnv(t)
	rep, out := e.purge(p, e.opts())
	before, after := countKinds(in), countKinds(out)
	if before["progress"] != 1083 {
		t.Fatalf("corpus file has %d progress records, SOURCES.md says 1083", before["progress"])
	}
	if after["progress"] != 0 || rep.DroppedProgress != 1083 {
		t.Errorf("progress: %d left, %d reported dropped", after["progress"], rep.DroppedProgress)
	}
	if rep.Stubs == 0 {
		t.Error("nothing stubbed")
	}
	if rep.BytesAfter >= rep.BytesBefore*3/4 {
		t.Errorf("%d -> %d bytes: less than a quarter saved", rep.BytesBefore, rep.BytesAfter)
	}
	// The compaction boundary and summary stay.
	if after["system"] == 0 || !strings.Contains(string(out), `"isCompactSummary":true`) {
		t.Error("the compaction was lost")
	}
}

// TestCorpusCompactionOptions: --archive-compacted and --inject-compaction
// add and move records, so the line-by-line invariants of TestCorpus do not
// apply; every real transcript still purges to a file that passes ccm
// check, and purges again to the same bytes.
func TestCorpusCompactionOptions(t *testing.T) {
	for _, v := range []struct {
		name string
		set  func(*Options)
	}{
		{"archive-compacted", func(o *Options) { o.ArchiveCompacted = true }},
		{"inject-compaction", func(o *Options) { o.InjectCompaction = true; o.KeepTurns = 4 }},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			root := testutil.CopyCorpus(t)
			files := corpusTranscripts(t, root)
			changed := 0
			for _, p := range files {
				rel, _ := filepath.Rel(root, p)
				t.Run(strings.ReplaceAll(rel, "/", "|"), func(t *testing.T) {
					in := readFile(t, p)
					e := newEnv(t)
					o := e.opts()
					v.set(&o)
					_, out := e.purge(p, o)
					if !bytes.Equal(in, out) {
						changed++
					}
					mustCheck(t, out, transcript.IsSubagentPath(p))
					if rep, again := e.purge(p, o); rep.Changed || !bytes.Equal(again, out) {
						t.Errorf("second purge changed the file (%d -> %d bytes)", len(out), len(again))
					}
				})
			}
			if changed < len(files)/2 {
				t.Errorf("only %d of %d files changed", changed, len(files))
			}
		})
	}
}

// corpusTranscripts lists the transcripts of a copy of the corpus.
func corpusTranscripts(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := sessions.Walk(filepath.Join(root, "projects"), func(p string, _ fs.DirEntry) error {
		files = append(files, p)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return files
}
