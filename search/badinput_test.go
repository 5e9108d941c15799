package search

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/textindex"
)

func TestQueriesWithNothingToSearchAreRefused(t *testing.T) {
	for _, q := range [][]string{{}, {""}, {"   "}, {"!!!", "--", "→…"}, {`""`}} {
		if _, err := ParseTerms(q); !errors.Is(err, ErrNoWords) {
			t.Errorf("ParseTerms(%q) = %v, want ErrNoWords", q, err)
		}
	}
	if _, err := CompileRegex(" "); !errors.Is(err, ErrNoWords) {
		t.Errorf("an empty regex: %v", err)
	}
	_, err := CompileRegex("a(b")
	if err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("a regex that does not compile: %v", err)
	}
	terms, err := ParseTerms([]string{`"Exact Phrase" word a.b.c`, "two words"})
	if err != nil || len(terms) != 4 || strings.Join(terms[0], " ") != "exact phrase" || strings.Join(terms[2], " ") != "a b c" || len(terms[3]) != 2 {
		t.Errorf("ParseTerms = %q, %v", terms, err)
	}
}

func TestPathologicalRegexEnds(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", strings.Repeat("a", 1<<20)+" tail", 1))
	// Exponential in a backtracking engine; linear in Go's.
	e.none(`re:(a*)*b`)
	e.none(`re:(a|aa)*c$`)
	e.one(`re:a{5}\s+tail`)
}

func TestTornLastLineIsReadAgainNextTime(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "first prompt about otters", 1))
	line := record("user", "aaaaaaaa", "/p", "second prompt about beavers", 2)
	// Claude Code is writing the second line: half of it is on disk.
	appendLines(t, tr, line[:len(line)/2])
	e.one("otters")
	e.none("beavers")
	appendLines(t, tr, line[len(line)/2:], record("user", "aaaaaaaa", "/p", "third prompt about beavers too", 3))
	hits := e.search("beavers")
	if len(hits) != 2 || hits[0].Line != 3 || hits[1].Line != 2 {
		t.Fatalf("after the line was finished: %+v", hits)
	}
	e.one("otters") // not indexed twice
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	e := newEnv(t, "")
	for i, w := range []string{"alpaca", "bison", "caribou"} {
		tr := filepath.Join(e.config, "projects", "-p", w+"-0000-4000-8000-000000000001.jsonl")
		appendLines(t, tr, record("user", w, "/p", "the "+w+" prompt "+strings.Repeat("filler ", i), 1))
	}
	e.one("bison")
	dir := Dir(e.home)
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.tix"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	damage := map[string]func(){
		"a flipped byte in a segment's footer": func() { flip(t, segs[0], -20) },
		"a flipped byte in a segment's block index": func() {
			// The footer's second word is the block index's offset.
			data, _ := os.ReadFile(segs[0])
			foot := data[len(data)-72:]
			flip(t, segs[0], int(binary.LittleEndian.Uint64(foot[8:]))+3)
		},
		"a truncated segment":  func() { os.Truncate(segs[0], 30) },
		"a missing segment":    func() { os.Remove(segs[0]) },
		"a truncated catalog":  func() { os.Truncate(filepath.Join(dir, "catalog"), 50) },
		"a catalog of garbage": func() { os.WriteFile(filepath.Join(dir, "catalog"), []byte("\x00\x01garbage\nend\n"), 0o600) },
	}
	for what, do := range damage {
		t.Run(what, func(t *testing.T) {
			e.update()
			segs, _ = filepath.Glob(filepath.Join(dir, "seg-*.tix"))
			do()
			ix, err := Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if ix.Rebuilt == "" {
				t.Errorf("%s was trusted", what)
			}
			ix.Close()
			for _, w := range []string{"alpaca", "bison", "caribou"} {
				e.one(w)
			}
			e.none("dromedary")
		})
	}
}

// A byte changed inside the postings or the document table is not seen
// when a segment opens (that would read the whole index on every search):
// a lookup that decodes it finds the damage, and the search rebuilds the
// index and answers from the rebuilt one.
func TestDamageFoundByALookupRebuilds(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	for i := 1; i <= 50; i++ {
		appendLines(t, tr, record("user", "aaaaaaaa", "/p", "prompt about llamas", i))
	}
	e.update()
	segs, _ := filepath.Glob(filepath.Join(Dir(e.home), "seg-*.tix"))
	// "llamas" is in every message: its postings are 50 bytes of 1s;
	// zero one of them (a delta of 0 is never written).
	data, _ := os.ReadFile(segs[0])
	i := strings.Index(string(data[8:]), strings.Repeat("\x01", 40))
	if i < 0 {
		t.Fatal("no run of 1-deltas in the postings")
	}
	data[8+i+10] = 0
	os.WriteFile(segs[0], data, 0o600)
	if hits := e.search("llamas", func(q *Query) { q.Limit = 100 }); len(hits) != 50 {
		t.Fatalf("%d hits after the damage, want 50", len(hits))
	}
}

// flip changes one byte of a file, at off (from the end when negative).
func flip(t *testing.T, path string, off int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(data)
	}
	data[off] ^= 0x55
	os.WriteFile(path, data, 0o600)
}

func TestSixtyMegabyteLine(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	var b strings.Builder
	for b.Len() < 60<<20 {
		b.WriteString("lorem ipsum dolor sit amet\n")
	}
	b.WriteString("the needle narwhal is here\n")
	appendLines(t, tr,
		record("assistant", "aaaaaaaa", "/p", toolUse("toolu_big", "Bash", map[string]any{"command": "cat huge.log"}), 1),
		record("user", "aaaaaaaa", "/p", toolResult("toolu_big", b.String()), 2))
	h := e.one(`"needle narwhal"`)
	if h.Line != 2 || h.Tool != "Bash" || !strings.Contains(h.Snippet, "needle narwhal") || len(h.Snippet) > 400 {
		t.Fatalf("hit %+v", h)
	}
}

func TestPrivacy(t *testing.T) {
	e := newEnv(t, "")
	e.redact = `sk-[A-Za-z0-9]{8,}`
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "deploy with key sk-SECRETKEY12345 to the staging cluster", 1))
	h := e.one("staging cluster")
	if strings.Contains(h.Snippet, "SECRETKEY") {
		t.Fatalf("the snippet shows the redacted key: %q", h.Snippet)
	}
	e.none("sk-SECRETKEY12345")
	e.none("SECRETKEY12345")
	// The index holds no key of the redacted word.
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	for _, se := range ix.cat.Segs {
		if n, _ := ix.segs[se.ID].s.PostingsSize(textindex.Key("secretkey12345")); n != 0 {
			t.Fatal("the index holds the redacted word")
		}
	}
	ix.Close()

	dir := Dir(e.home)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err := Forget(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("forget left %d files", len(entries))
	}
	// Changing the patterns rebuilds the index under the new ones.
	e.redact = ""
	e.one("SECRETKEY12345")
	e.redact = `staging`
	e.none("staging")
}

func TestSmallSegmentsAreMerged(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	other := filepath.Join(e.config, "projects", "-p", "bbbbbbbb-0000-4000-8000-000000000002.jsonl")
	appendLines(t, other, record("user", "bbbbbbbb", "/p", "rewritten later: original words", 1))
	for i := 1; i <= 2*mergeAt; i++ {
		appendLines(t, tr, record("user", "aaaaaaaa", "/p", "growing prompt number quetzal", i))
		if i == 3 {
			// A rewrite: its old messages are dropped by the merge.
			os.WriteFile(other+".new", []byte(record("user", "bbbbbbbb", "/p", "rewritten later: new words", 1)), 0o600)
			os.Rename(other+".new", other)
		}
		e.update()
	}
	segs, _ := filepath.Glob(filepath.Join(Dir(e.home), "seg-*.tix"))
	if len(segs) >= mergeAt {
		t.Fatalf("%d segments after %d updates", len(segs), 2*mergeAt)
	}
	if hits := e.search("quetzal", func(q *Query) { q.Limit = 100 }); len(hits) != 2*mergeAt {
		t.Fatalf("%d hits, want %d", len(hits), 2*mergeAt)
	}
	e.none("original words")
	e.one("new words")
	ix, _ := Open(context.Background(), Dir(e.home))
	defer ix.Close()
	if st := ix.Stats(); st.Docs != 2*mergeAt+1 {
		t.Fatalf("%d messages in the index, want %d (the rewritten file's old one dropped)", st.Docs, 2*mergeAt+1)
	}
}

// A search answers before the small segments are merged: the update
// that writes the eighth small segment hands the index to the search with
// all eight, and the merge follows once the search has answered.
func TestSearchAnswersBeforeTheMerge(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	for i := 1; i < mergeAt; i++ {
		appendLines(t, tr, record("user", "aaaaaaaa", "/p", "growing prompt number quetzal", i))
		e.update()
	}
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "the last growth, a kinkajou", mergeAt))
	src := e.sources()
	err := With(context.Background(), Dir(e.home), src, func(ix *Index, st UpdateStats) error {
		if st.Grown != 1 {
			t.Errorf("the update found %d grown files, want 1", st.Grown)
		}
		if n := ix.Stats().Segments; n != mergeAt {
			t.Errorf("the search was handed %d segments, want the %d small ones unmerged", n, mergeAt)
		}
		q := &Query{Terms: [][]string{{"kinkajou"}}}
		res, err := ix.Search(context.Background(), q, src.Resolve)
		if err == nil && len(res.Hits) != 1 {
			t.Errorf("%d hits for the last growth, want 1", len(res.Hits))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(Dir(e.home), "seg-*.tix"))
	if len(segs) != 1 {
		t.Fatalf("%d segment files after the search, want the 1 merged", len(segs))
	}
	if hits := e.search("quetzal", func(q *Query) { q.Limit = 100 }); len(hits) != mergeAt-1 {
		t.Fatalf("%d hits after the merge, want %d", len(hits), mergeAt-1)
	}
	e.one("kinkajou")
}

func TestCatalogJournal(t *testing.T) {
	e := newEnv(t, "")
	dir := Dir(e.home)
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "first about gnus", 1))
	e.update()
	base, _ := os.ReadFile(filepath.Join(dir, "catalog"))
	// A growth is a journal record; the base stays as it was.
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "second about okapis", 2))
	e.update()
	if now, _ := os.ReadFile(filepath.Join(dir, "catalog")); string(now) != string(base) {
		t.Fatal("a small update rewrote the catalog's base")
	}
	log, err := os.ReadFile(filepath.Join(dir, "catalog.log"))
	if err != nil || !strings.Contains(string(log), "commit\t") {
		t.Fatalf("no journal record: %v", err)
	}
	// A record torn by a kill: cut, and the update it was is done again.
	appendLines(t, tr, record("user", "aaaaaaaa", "/p", "third about tapirs", 3))
	os.WriteFile(filepath.Join(dir, "catalog.log"), append(log, "H\t9\t9\nS\t1\t2"...), 0o600)
	ix, err := Open(context.Background(), dir)
	if err != nil || ix.Rebuilt != "" {
		t.Fatalf("open after a torn record: %v %q", err, ix.Rebuilt)
	}
	ix.Close()
	if now, _ := os.ReadFile(filepath.Join(dir, "catalog.log")); string(now) != string(log) {
		t.Fatal("the torn record was not cut")
	}
	for _, w := range []string{"gnus", "okapis", "tapirs"} {
		e.one(w)
	}
	// A journal past its size is folded into a new base, and goes.
	c, _ := readCatalog(dir)
	c.logSize = maxJournal
	if err := c.save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "catalog.log")); err == nil {
		t.Fatal("a new base left the old journal")
	}
	e.one("tapirs")
}

// A transcript rewritten again and again (a purge each time) leaves its
// old messages dead in the segments; Vacuum drops them, so the index does
// not grow with rewrites.
func TestVacuumDropsDeadMessages(t *testing.T) {
	e := newEnv(t, "")
	tr := filepath.Join(e.config, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, record("user", "aaaaaaaa", "/p", "prompt about hyraxes", i))
	}
	appendLines(t, tr, lines...)
	e.update()
	for r := 0; r < 3; r++ {
		data, _ := os.ReadFile(tr)
		os.WriteFile(tr+".new", data, 0o600)
		os.Rename(tr+".new", tr)
		e.update()
	}
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Docs != 80 {
		t.Fatalf("%d messages before the vacuum, want 80 (20 live)", st.Docs)
	}
	n, err := ix.Vacuum(context.Background())
	if err != nil || n == 0 {
		t.Fatalf("vacuum rewrote %d segments: %v", n, err)
	}
	if st := ix.Stats(); st.Docs != 20 {
		t.Fatalf("%d messages after the vacuum, want 20", st.Docs)
	}
	ix.Close()
	if hits := e.search("hyraxes", func(q *Query) { q.Limit = 100 }); len(hits) != 20 {
		t.Fatalf("%d hits after the vacuum", len(hits))
	}
}

// A snippet is one line a terminal cannot be steered by: white space and
// control characters, C0 and C1 (0x9b is a CSI), become one space, and
// the mark still spans the match.
func TestSnippetHasNoControlCharacters(t *testing.T) {
	text := "before\x1b[2J\u009b31m the kestrel\r\n\tafter"
	s := strings.Index(text, "kestrel")
	got, mark := snippet(text, s, s+len("kestrel"))
	if want := "before [2J 31m the kestrel after"; got != want {
		t.Errorf("snippet %q, want %q", got, want)
	}
	if got[mark[0]:mark[1]] != "kestrel" {
		t.Errorf("mark %v spans %q", mark, got[mark[0]:mark[1]])
	}
}
