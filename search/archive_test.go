package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// archived writes a session with a prompt, a subagent's reply and a
// stubbed tool output, and archives it (with the store's content, as ccm
// archive does); it returns the archive's path.
func (e *env) archived(sid string) string {
	e.t.Helper()
	proj := filepath.Join(e.config, "projects", "-w")
	tr := filepath.Join(proj, sid+".jsonl")
	sub := filepath.Join(proj, sid, "subagents", "agent-s1.jsonl")
	appendLines(e.t, tr,
		record("user", sid, "/w", "archived prompt about ibexes", 1),
		record("assistant", sid, "/w", toolUse("toolu_1", "Bash", map[string]any{"command": "make test"}), 2),
		record("user", sid, "/w", toolResult("toolu_1", e.stubFor("FAIL: ibexes basalt cormorant\n")), 3))
	appendLines(e.t, sub, record("assistant", sid, "/w", text("subagent on ibexes"), 1))
	rows, errs, err := sessions.Scan(context.Background(), e.config, sessions.Options{})
	if err != nil || len(errs) > 0 {
		e.t.Fatal(err, errs)
	}
	for _, r := range rows {
		if r.ID != sid {
			continue
		}
		res, err := archive.Create(context.Background(), archive.Source{ConfigDir: e.config, Session: r.Session, Project: "/w"},
			archive.Options{Root: filepath.Join(e.home, "archive"), Now: time.Now(), Level: zstd.SpeedFastest, Store: e.store})
		if err != nil {
			e.t.Fatal(err)
		}
		return res.Archive
	}
	e.t.Fatalf("no session %s", sid)
	return ""
}

// The archive writer's hook: a part written when the archive is, only
// where there is an index, is what the next search reads.
func TestIndexArchivesWritesThePartSearchReads(t *testing.T) {
	e := newEnv(t, "")
	sid := "cccccccc-0000-4000-8000-000000000003"
	arc := e.archived(sid)
	part := PartPath(e.home, "-w", sid)
	// No index yet: nothing is written.
	if errs := IndexArchives(context.Background(), e.home, []Written{{Path: arc}}, e.partOptions(), 0); errs != nil {
		t.Fatal(errs)
	}
	if _, err := os.Stat(part); err == nil {
		t.Fatal("a part was written without a search index")
	}
	e.update() // an index, which does not hold the archive yet
	os.Remove(part)
	if errs := IndexArchives(context.Background(), e.home, []Written{{Path: arc}}, e.partOptions(), 0); errs != nil {
		t.Fatal(errs)
	}
	fi, err := os.Stat(part)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("part mode %v", fi.Mode())
	}
	hits := e.search("ibexes", func(q *Query) { q.Limit = 10 })
	if len(hits) != 3 {
		t.Fatalf("%d hits, want the prompt, the stubbed output and the subagent's reply: %+v", len(hits), hits)
	}
	for _, h := range hits {
		if !h.Archived {
			t.Fatalf("hit %+v not archived", h)
		}
	}
	if h := e.one(`"basalt cormorant"`); h.Line != 3 || h.Kind != "tool output" {
		t.Fatalf("stubbed output hit %+v", h)
	}
	if fi2, _ := os.Stat(part); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the search wrote the part again instead of reading it")
	}
}

// An archive carries its stubs' content: when the store no longer has it
// (pruned, or deleted whole), the part written from the archive still
// holds the stubbed output's text.
func TestStubsOfAnArchiveResolveFromItsOwnContent(t *testing.T) {
	e := newEnv(t, "")
	sid := "cccccccc-0000-4000-8000-000000000004"
	arc := e.archived(sid)
	e.update()
	// A new, empty store: the content is only in the archive now.
	st, err := ccm.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	e.store = st
	os.Remove(PartPath(e.home, "-w", sid))
	if errs := IndexArchives(context.Background(), e.home, []Written{{Path: arc}}, e.partOptions(), 0); errs != nil {
		t.Fatal(errs)
	}
	if h := e.one(`"basalt cormorant"`); h.Line != 3 || !h.Archived || !strings.Contains(h.Snippet, "cormorant") {
		t.Fatalf("hit %+v", h)
	}
	// Also when a search writes the part, and with no store at all.
	os.Remove(PartPath(e.home, "-w", sid))
	e.store = nil
	e.one(`"basalt cormorant"`)
	// The content was copied out to a temp file beside the part, and
	// removed after.
	entries, _ := os.ReadDir(filepath.Dir(PartPath(e.home, "-w", sid)))
	if len(entries) != 1 {
		t.Fatalf("parts folder holds %d files, want the part alone", len(entries))
	}
	// Content that does not hash to its key is not used: the stub stays
	// a stub (its text is the stub's, not the output's).
	os.Remove(PartPath(e.home, "-w", sid))
	tamperContent(t, arc)
	e.none(`"basalt cormorant"`)
}

// tamperContent rewrites an archive with one byte of its first store/
// member changed (size and sidecar unchanged: only the key check sees it).
func tamperContent(t *testing.T, arc string) {
	t.Helper()
	data, err := os.ReadFile(arc)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	raw, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "FAIL: ibexes basalt")
	if i < 0 {
		t.Fatal("no content member")
	}
	raw[i] = 'X'
	enc, _ := zstd.NewWriter(nil)
	if err := os.WriteFile(arc, enc.EncodeAll(raw, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The text of an archive goes when the archive does (unarchived or
// removed); a part that no archive uses goes at the next Vacuum.
func TestPartsGoWithTheirArchives(t *testing.T) {
	e := newEnv(t, "")
	sid := "cccccccc-0000-4000-8000-000000000005"
	arc := e.archived(sid)
	e.one(`"basalt cormorant"`)
	part := PartPath(e.home, "-w", sid)
	if _, err := os.Stat(part); err != nil {
		t.Fatal(err)
	}
	os.Remove(arc)
	os.Remove(archive.SidecarPath(arc))
	e.none(`"basalt cormorant"`)
	if _, err := os.Stat(part); err == nil {
		t.Fatal("the part of a removed archive is still there")
	}
	stray := PartPath(e.home, "-x", "dddddddd-0000-4000-8000-000000000006")
	os.MkdirAll(filepath.Dir(stray), 0o700)
	os.WriteFile(stray, []byte("text of a session"), 0o600)
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Update(context.Background(), e.sources()); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Vacuum(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); err == nil {
		t.Fatal("Vacuum left a part no archive uses")
	}
}

// A part deleted or damaged after it was indexed (the archive unchanged,
// so no update would read it again) is found by the search that reads it,
// written again from the archive, and the search answers from it.
func TestMissingOrDamagedPartIsWrittenAgain(t *testing.T) {
	e := newEnv(t, "")
	sid := "cccccccc-0000-4000-8000-000000000007"
	e.archived(sid)
	e.one(`"basalt cormorant"`)
	part := PartPath(e.home, "-w", sid)
	os.Remove(part)
	e.one(`"basalt cormorant"`)
	if _, err := os.Stat(part); err != nil {
		t.Fatal("the part was not written again")
	}
	// Bytes of the part changed in turn, for a search and for a page:
	// never a wrong or lost hit or message, never an error.
	data, _ := os.ReadFile(part)
	for i := 0; i < len(data)-16; i += 7 {
		d := append([]byte(nil), data...)
		d[i] ^= 0x5a
		os.WriteFile(part, d, 0o600)
		if h := e.one(`"basalt cormorant"`); h.Line != 3 || !h.Archived {
			t.Fatalf("byte %d: hit %+v", i, h)
		}
		os.WriteFile(part, d, 0o600)
		err := With(context.Background(), Dir(e.home), e.sources(), func(ix *Index, _ UpdateStats) error {
			p, err := ix.ReadPage(context.Background(), sid, "", 1, 10, nil, nil)
			if err == nil && (len(p.Messages) != 3 || !strings.Contains(p.Messages[2].Text, "basalt cormorant")) {
				t.Fatalf("byte %d: page %+v", i, p)
			}
			return err
		})
		if err != nil {
			t.Fatalf("byte %d: page: %v", i, err)
		}
	}
}

// Parts lost together (a crash, a folder removed) are all written again
// by the next search, not one per search.
func TestLostPartsRewrittenTogether(t *testing.T) {
	e := newEnv(t, "")
	a, b := "cccccccc-0000-4000-8000-00000000000a", "cccccccc-0000-4000-8000-00000000000b"
	e.archived(a)
	e.archived(b)
	if n := len(e.search("ibexes")); n != 6 {
		t.Fatalf("%d hits, want 3 of each session", n)
	}
	if err := os.RemoveAll(filepath.Join(Dir(e.home), "parts")); err != nil {
		t.Fatal(err)
	}
	if n := len(e.search("ibexes")); n != 6 {
		t.Errorf("%d hits after the parts were lost, want 6", n)
	}
}
