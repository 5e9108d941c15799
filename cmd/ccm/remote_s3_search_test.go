package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ccm/internal/objstore/s3test"
)

// searchHits is what ccm --json search prints.
type searchHits struct {
	Hits []struct {
		Session  string `json:"session"`
		Line     int    `json:"line"`
		Archived bool   `json:"archived"`
		Machine  string `json:"machine"`
		Path     string `json:"path"`
		Resume   string `json:"resume"`
	} `json:"hits"`
}

// firstStub finds the first stub of a transcript: its line (1-based) and
// a piece of the content it stands for (read back with ccm cache get), as
// a regular expression.
func (e *s3env) firstStub(id string) (int, string) {
	e.t.Helper()
	f, err := os.Open(e.transcriptPath(id))
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	key := regexp.MustCompile(`get: ccm cache get ([^\\\s"]+)`)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		m := key.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		for _, l := range strings.Split(e.ok("cache", "get", string(m[1])), "\n") {
			if l = strings.TrimSpace(l); len(l) >= 40 {
				return n, regexp.QuoteMeta(l[:40])
			}
		}
	}
	e.t.Fatalf("%s: no stub with a line of 40 characters", id)
	return 0, ""
}

// TestS3Search: ccm search --archived --from s3://… finds, on another
// machine with an empty store, the content of a stub in an archive a
// first machine put in the bucket; each archive is downloaded once; a
// hit's resume line brings the session back; the bucket's archives stay
// out of a search that does not name it; a newer archive of a session
// replaces the older one's text.
func TestS3Search(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(3, 0)
	id := a.ids[0]
	line, piece := a.firstStub(id)
	a.ok("archive", "--older-than", "1d", "--to", url)

	b := newS3Env(t, srv, "desktop")
	search := func(args ...string) searchHits {
		t.Helper()
		var res searchHits
		out := b.ok(append([]string{"--json", "search"}, args...)...)
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search %v: %v\n%s", args, err, out)
		}
		return res
	}
	res := search("--archived", "--from", url, "--session", id[:8], "--limit", "1000", "--regex", piece)
	found := false
	for _, h := range res.Hits {
		if h.Line == line {
			found = true
			want := "ccm unarchive --from " + url + " " + id + " && cd " + a.root + " && claude --resume " + id
			if h.Session != id || !h.Archived || h.Machine != "laptop" || !strings.HasPrefix(h.Path, url+"/laptop/"+a.folder+"/"+id+".") || h.Resume != want {
				t.Errorf("hit %+v, want session %s archived on laptop under %s, resume %q", h, id, url, want)
			}
		}
	}
	if !found {
		t.Fatalf("the stub's content (line %d) was not found in the bucket's archive: %+v", line, res.Hits)
	}
	// Every archive was read once: nothing new for the next search.
	var stats struct {
		Update struct {
			Archives int `json:"archives"`
			Removed  int `json:"removed"`
		} `json:"update"`
	}
	json.Unmarshal([]byte(b.ok("--json", "search", "--stats", "--archived", "--from", url)), &stats)
	if stats.Update.Archives != 0 {
		t.Errorf("the second search indexed %d archives again", stats.Update.Archives)
	}
	// Its part lost, an archive listed from what the index knew (its
	// manifest not read) is downloaded again, its manifest read first.
	if err := os.RemoveAll(filepath.Join(b.home, "search", "parts")); err != nil {
		t.Fatal(err)
	}
	if n := len(search("--archived", "--from", url, "--regex", piece).Hits); n == 0 {
		t.Error("nothing found once the parts were written again")
	}
	// A search that does not name the bucket does not see its archives,
	// and keeps their text for the next one that does.
	if _, _, code := b.run("search", "--regex", piece); code != 1 {
		t.Errorf("search without --from: exit %d, want 1 (no hit)", code)
	}
	if n := len(search("--archived", "--from", url, "--regex", piece).Hits); n == 0 {
		t.Error("the bucket's archives were dropped by a search that did not name it")
	}
	json.Unmarshal([]byte(b.ok("--json", "search", "--stats", "--archived", "--from", url)), &stats)
	if stats.Update.Archives != 0 || stats.Update.Removed != 0 {
		t.Errorf("after a search without --from: %+v", stats.Update)
	}

	// The laptop brings the session back, writes to it and archives it
	// again: the bucket's newest archive has the new words, and the old
	// one's text goes.
	a.ok("unarchive", "--from", url, id)
	f, err := os.OpenFile(a.transcriptPath(id), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","uuid":"u-zebra","sessionId":"` + id + `","timestamp":"2026-01-02T03:04:05Z","message":{"role":"user","content":"quokkaphrase seen in the bucket"}}` + "\n")
	f.Close()
	old := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(a.transcriptPath(id), old, old); err != nil {
		t.Fatal(err)
	}
	a.ok("archive", "--to", url, "--session", id)
	res = search("--archived", "--from", url, "quokkaphrase")
	if len(res.Hits) != 1 || res.Hits[0].Session != id {
		t.Fatalf("the newer archive's words: %+v", res.Hits)
	}
	json.Unmarshal([]byte(b.ok("--json", "search", "--stats", "--archived", "--from", url)), &stats)
	if stats.Update.Archives != 0 {
		t.Errorf("stats after the newer archive: %+v", stats.Update)
	}

	// The resume line's unarchive brings the session to the desktop.
	cmd := strings.Fields(strings.Split(res.Hits[0].Resume, " && ")[0])
	b.ok(cmd[1:]...)
	if _, err := os.Stat(filepath.Join(b.cfg, "projects", a.folder, id+".jsonl")); err != nil {
		t.Errorf("the resume line's %q did not restore the session: %v", cmd, err)
	}

	// Bad input: one line, exit 2.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--from", url, "x"}, "ccm: --from goes with --archived"},
		{[]string{"search", "--archived", "--from", "s3://", "x"}, "ccm: "},
		{[]string{"search", "--archived", "--from", "/some/folder", "x"}, "ccm: "},
	} {
		_, errs, code := b.run(c.args...)
		if code != 2 || !strings.HasPrefix(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("ccm %v: exit %d, %q", c.args, code, errs)
		}
	}
	if _, errs, code := b.run("search", "--archived", "--from", "s3://no-such-bucket-ccm", "x"); code == 0 || code == 1 || strings.Count(errs, "\n") != 1 {
		t.Errorf("a missing bucket: exit %d, %q", code, errs)
	}
}

// TestS3SearchServerGone: a server that goes away while a search
// downloads the bucket's archives: one line, exit 2, no hit printed; the
// next search downloads only the archives whose parts are missing, and
// finds what is in all of them.
func TestS3SearchServerGone(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(3, 3<<20) // 3 MB of random bytes each: archives of about 3 MB
	a.ok("archive", "--older-than", "1d", "--to", url)
	l, err := a.target(t).List(context.Background())
	if err != nil || len(l.Archives) != 3 {
		t.Fatalf("listed %v, %v", l, err)
	}
	var total, least int64 = 0, 1 << 62
	for _, x := range l.Archives {
		total += x.Size
		least = min(least, x.Size)
	}

	b := newS3Env(t, srv, "desktop")
	base := b.env
	proxy := func(downLimit int64) *cutProxy {
		p := newCutProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 0, 0)
		p.downLimit = downLimit
		b.env = append(append([]string(nil), base...), "CCM_S3_ENDPOINT="+p.endpoint())
		return p
	}
	// One archive at a time: the first comes whole, the second is cut.
	proxy(least + least/2)
	out, errs, code := b.run("search", "-j", "1", "--archived", "--from", url, "resume")
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ccm: ") || out != "" {
		t.Errorf("server gone mid-search: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if left := filesUnder(filepath.Join(b.home, "search", "fetch")); len(left) != 0 {
		t.Errorf("downloads left behind: %v", left)
	}
	p := proxy(0)
	b.ok("search", "--stats", "--archived", "--from", url)
	if got := p.recv.Load(); got > total-least+least/4 {
		t.Errorf("the search after the failure read %d bytes; the archives are %d bytes, one was indexed before", got, total)
	}
	// The first sessions' prompts are in every archive's text.
	res := searchHits{}
	json.Unmarshal([]byte(b.ok("--json", "search", "--archived", "--from", url, "--limit", "1000", "--regex", ".")), &res)
	seen := map[string]bool{}
	for _, h := range res.Hits {
		seen[h.Session] = true
	}
	if len(seen) != 3 {
		t.Errorf("hits of %d sessions after the failed search, want 3", len(seen))
	}
}

// TestS3SearchOwnArchives: ccm archive --to s3:// writes the search parts
// of what it uploads where the machine has a search index, so that its
// search of the bucket downloads none of its own archives.
func TestS3SearchOwnArchives(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(2, 1<<20)
	id := a.ids[0]
	line, piece := a.firstStub(id)
	a.ok("search", "--stats") // an index: archive writes parts only for a user who searches
	a.ok("archive", "--older-than", "1d", "--to", url)
	p := newCutProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 0, 0)
	a.env = append(a.env, "CCM_S3_ENDPOINT="+p.endpoint())
	var res searchHits
	json.Unmarshal([]byte(a.ok("--json", "search", "--archived", "--from", url, "--limit", "1000", "--regex", piece)), &res)
	found := false
	for _, h := range res.Hits {
		found = found || h.Session == id && h.Line == line && h.Machine == "laptop"
	}
	if !found {
		t.Errorf("the stub's content (line %d of %s) was not found: %+v", line, id, res.Hits)
	}
	if got := p.recv.Load(); got > 256<<10 {
		t.Errorf("the search of the machine's own archives read %d bytes from the server (archives of over 1 MB each)", got)
	}
}
