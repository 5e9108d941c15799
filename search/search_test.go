package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/testutil"
	"ccm/internal/textindex"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// plant appends, to a session of the config dir, a prompt, a reply, a
// tool call and a tool output that a purge stubbed, each with its own
// phrase, and returns the line of the first.
func (e *env) plant(transcript, session, cwd, tag string) int {
	e.t.Helper()
	first := 0
	if _, err := os.Stat(transcript); err == nil {
		first = lineCount(e.t, transcript)
	}
	appendLines(e.t, transcript,
		record("user", session, cwd, "please look at the "+tag+" prompt marmalade zebra", 1),
		record("assistant", session, cwd, text("Found the "+tag+" reply walrus accordion."), 2),
		record("assistant", session, cwd, toolUse("toolu_"+tag, "Bash", map[string]any{"command": "grep -rn " + tag + "-xylophone ./src"}), 3),
		record("user", session, cwd, toolResult("toolu_"+tag, e.stubFor("FAIL: "+tag+" glacier tangerine obsidian\nexit status 1\n")), 4),
	)
	return first + 1
}

func TestPlantedPhrasesInTheCorpus(t *testing.T) {
	if _, ok := testutil.LookupShared(t); !ok {
		t.Skip("no corpus: ../shared/corpus is absent")
	}
	e := newEnv(t, testutil.CopyCorpus(t))
	tr := filepath.Join(e.config, testutil.Demo)
	sid := strings.TrimSuffix(filepath.Base(tr), ".jsonl")
	line := e.plant(tr, sid, "/path/to/Demo", "corpusx")

	h := e.one(`"corpusx prompt marmalade"`)
	if h.Session != sid || h.Line != line || h.Kind != "prompt" || h.Role != "user" || h.Project != "/path/to/Demo" {
		t.Fatalf("prompt hit %+v, want session %s line %d", h, sid, line)
	}
	if h = e.one("corpusx walrus accordion"); h.Line != line+1 || h.Kind != "reply" {
		t.Fatalf("reply hit %+v", h)
	}
	if h = e.one("corpusx-xylophone"); h.Line != line+2 || h.Kind != "tool input" || h.Tool != "Bash" {
		t.Fatalf("tool input hit %+v", h)
	}
	// The stubbed output: the words are only in the store.
	if h = e.one(`"corpusx glacier tangerine"`); h.Line != line+3 || h.Kind != "tool output" || h.Tool != "Bash" {
		t.Fatalf("stubbed output hit %+v", h)
	}
	if !strings.Contains(h.Snippet, "glacier tangerine") {
		t.Fatalf("snippet %q does not show the stored text", h.Snippet)
	}
	e.none(`"walrus marmalade"`)          // both words are there, never side by side
	e.none("corpusx nowhere-to-be-found") // one word is nowhere
	e.one("corpusx walrus", func(q *Query) { q.Kinds = textindex.KindReply })
	e.none("corpusx walrus", func(q *Query) { q.Kinds = textindex.KindPrompt })
	e.one("corpusx glacier", func(q *Query) { q.Tool = "bash" })
	e.none("corpusx glacier", func(q *Query) { q.Tool = "Read" })

	// A word every corpus session has: hits newest first, and a real
	// subagent transcript of the corpus is searched too.
	hits := e.search("the", func(q *Query) { q.Limit = 200 })
	if len(hits) != 200 {
		t.Fatalf("%d hits for \"the\", want 200", len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Time.After(hits[i-1].Time) {
			t.Fatalf("hit %d is newer than hit %d", i, i-1)
		}
	}
	agent := filepath.Join(e.config, testutil.SpotterAgent)
	appendLines(t, agent, record("assistant", "4d5611e5-241a-462a-8d15-5122611a9569", "/spotter", text("subagent saffron kettledrum"), 9))
	if h = e.one("saffron kettledrum"); h.Agent != "a2898e3" || h.Session != "4d5611e5-241a-462a-8d15-5122611a9569" {
		t.Fatalf("subagent hit %+v", h)
	}
}

func TestGrowDeleteAndArchive(t *testing.T) {
	e := newEnv(t, "")
	proj := filepath.Join(e.config, "projects", "-work-app")
	sid := "11111111-2222-4333-8444-555555555555"
	tr := filepath.Join(proj, sid+".jsonl")
	generate(t, tr, 7, 300<<10, sid, "/work/app")
	line := e.plant(tr, sid, "/work/app", "grow1")
	if st := e.update(); st.New != 1 {
		t.Fatalf("first update %+v", st)
	}
	if h := e.one("grow1 walrus"); h.Line != line+1 {
		t.Fatalf("hit %+v", h)
	}

	// The session grows: only its new bytes are read.
	size := fileSize(t, tr)
	appendLines(t, tr, record("user", sid, "/work/app", "later prompt about pelican fjords", 50))
	st := e.update()
	if st.Grown != 1 || st.New != 0 || st.Bytes != fileSize(t, tr)-size {
		t.Fatalf("update after growing %+v, want 1 grown and %d bytes", st, fileSize(t, tr)-size)
	}
	if h := e.one("pelican fjords"); h.Line != lineCount(t, tr) {
		t.Fatalf("grown hit %+v", h)
	}

	// A rewrite (a purge's rename) is indexed afresh; the old
	// messages do not come back twice.
	data, _ := os.ReadFile(tr)
	os.WriteFile(tr+".new", data, 0o600)
	os.Rename(tr+".new", tr)
	if st := e.update(); st.Rewritten != 1 {
		t.Fatalf("update after a rewrite %+v", st)
	}
	e.one("pelican fjords")

	// Archived: found from the archive, marked, with how to get it back;
	// the archive has no index part yet, so it is read once.
	rows, _, err := sessions.Scan(context.Background(), e.config, sessions.Options{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("scan: %v %d rows", err, len(rows))
	}
	root := filepath.Join(e.home, "archive")
	if _, err := archive.Create(context.Background(), archive.Source{ConfigDir: e.config, Session: rows[0].Session, Project: "/work/app"},
		archive.Options{Root: root, Now: time.Now(), Level: zstd.SpeedFastest}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tr); err == nil {
		t.Fatal("the archived transcript is still there")
	}
	h := e.one("pelican fjords")
	if !h.Archived || h.Session != sid || h.Project != "/work/app" || !strings.HasPrefix(h.Resume, "ccm unarchive "+sid+" && ") {
		t.Fatalf("archived hit %+v", h)
	}
	if h = e.one(`"grow1 glacier tangerine"`); !h.Archived || h.Line != line+3 {
		t.Fatalf("archived stub hit %+v", h)
	}
	if entries, _ := os.ReadDir(proj); len(entries) != 0 {
		t.Fatalf("searching an archive left %d files in the config dir", len(entries))
	}
	part := PartPath(e.home, "-work-app", sid)
	fi, err := os.Stat(part)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index part: %v %v", err, fi)
	}
	// The part is read from now on, not the archive: a second search
	// does not rewrite it.
	mt := fi.ModTime()
	e.one("pelican fjords", func(q *Query) { q.Archived = true })
	e.none("pelican fjords", func(q *Query) { q.Live = true })
	if fi, _ := os.Stat(part); !fi.ModTime().Equal(mt) {
		t.Fatal("the part was written again")
	}

	// The archive is removed: its hits go.
	os.Remove(archive.ArchivePath(root, "-work-app", sid))
	e.none("pelican fjords")
}

func TestSessionDeletedHitsGone(t *testing.T) {
	e := newEnv(t, "")
	a := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	b := filepath.Join(e.config, "projects", "-p", "bbbbbbbb-0000-4000-8000-000000000002.jsonl")
	appendLines(t, a, record("user", "aaaaaaaa", "/p", "shared words and quokka", 1))
	appendLines(t, b, record("user", "bbbbbbbb", "/p", "shared words and numbat", 1))
	if hits := e.search("shared words"); len(hits) != 2 {
		t.Fatalf("%d hits", len(hits))
	}
	os.Remove(a)
	if st := e.update(); st.Removed != 1 {
		t.Fatalf("update %+v", st)
	}
	e.none("quokka")
	if h := e.one("shared words"); !strings.HasPrefix(h.Session, "bbbbbbbb") {
		t.Fatalf("hit %+v", h)
	}
}

func fileSize(t *testing.T, p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestDropForgetsRemovedFilesAtOnce(t *testing.T) {
	e := newEnv(t, "")
	dir := filepath.Join(e.config, "projects", "-p")
	a := filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	sub := filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001", "subagents", "agent-x1.jsonl")
	b := filepath.Join(dir, "bbbbbbbb-0000-4000-8000-000000000002.jsonl")
	appendLines(t, a, record("user", "aaaaaaaa", "/p", "wombat", 1))
	appendLines(t, sub, record("assistant", "aaaaaaaa", "/p", text("wombat helper"), 1))
	appendLines(t, b, record("user", "bbbbbbbb", "/p", "wombat too", 1))
	if hits := e.search("wombat"); len(hits) != 3 {
		t.Fatalf("%d hits", len(hits))
	}
	os.Remove(a)
	os.RemoveAll(filepath.Dir(filepath.Dir(sub)))
	if err := Drop(context.Background(), Dir(e.home), []string{a, filepath.Dir(filepath.Dir(sub))}); err != nil {
		t.Fatal(err)
	}
	cat, err := readCatalog(Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Files) != 1 || cat.Files["L"+b] == nil {
		t.Fatalf("after Drop the catalog has %d files", len(cat.Files))
	}
	// Without an index, Drop does nothing and makes none.
	if err := Drop(context.Background(), filepath.Join(t.TempDir(), "search"), []string{a}); err != nil {
		t.Fatal(err)
	}
}

// When the newest candidates all fail the check (the words are common,
// the phrase is not), older ones are taken, pass after pass.
func TestOldMatchBehindManyCandidates(t *testing.T) {
	defer func(n int) { maxCandidates = n }(maxCandidates)
	maxCandidates = 4
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "the alpha beta phrase", 1))
	for i := 2; i <= 30; i++ {
		appendLines(t, tr, record("user", "aaaaaaaa", "/p", "alpha and then beta", i))
	}
	if h := e.one(`"alpha beta"`); h.Line != 1 {
		t.Fatalf("hit %+v", h)
	}
	if hits := e.search("alpha beta", func(q *Query) { q.Limit = 100 }); len(hits) != 30 {
		t.Fatalf("%d hits for the words, want 30", len(hits))
	}
}

func TestRelevanceOrdersByDensity(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr,
		record("user", "aaaaaaaa", "/p", "kestrel kestrel kestrel nest", 1),
		record("user", "aaaaaaaa", "/p", "a long prompt that mentions a kestrel once among many other words "+strings.Repeat("filler ", 300), 2))
	byTime := e.search("kestrel")
	byRel := e.search("kestrel", func(q *Query) { q.Relevance = true })
	if len(byTime) != 2 || byTime[0].Line != 2 || byRel[0].Line != 1 || byRel[0].Score <= byRel[1].Score {
		t.Fatalf("by time %d,%d; by relevance %d,%d (%.3f, %.3f)", byTime[0].Line, byTime[1].Line, byRel[0].Line, byRel[1].Line, byRel[0].Score, byRel[1].Score)
	}
}
