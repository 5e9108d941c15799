package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ccm/internal/objstore/s3test"
	"ccm/sessions/archive"
)

// newHookProxy forwards requests to the S3 server at endpoint, calling
// before with each one first: a test acts at a chosen request of a run.
// It returns the proxy's endpoint. The requests keep the Host they were
// signed for.
func newHookProxy(t *testing.T, endpoint string, before func(*http.Request)) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		before(r.In)
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(srv.Close)
	return srv.URL
}

// archivedList is what ccm --json sessions --archived --from lists.
type archivedList struct {
	Sessions []struct {
		ID      string `json:"session"`
		Archive string `json:"archive"`
	} `json:"sessions"`
}

// TestS3ArchiveRollbackKeepsEarlier: archive --to s3:// of a session
// that is written to while its archive is uploaded leaves the session in
// place and takes back only what the run put in the bucket. A complete
// archive of the same files that was there already (an earlier export,
// or an archive run stopped before it removed the originals), which the
// upload keeps as it is, stays; so does an earlier archive of other
// content, whose manifest goes back; with nothing there before, nothing
// is left.
func TestS3ArchiveRollbackKeepsEarlier(t *testing.T) {
	srv := s3test.Need(t)
	prefix := srv.Prefix
	for i, c := range []struct {
		name    string
		earlier string // "export", or "archive" (a run killed before the originals went), before the archive
		changed bool   // the session written to between them
		kept    bool   // the archive there is of the same files: nothing is sent
	}{
		{"an export of the same files there", "export", false, true},
		{"a stopped archive of the same files there", "archive", false, true},
		{"an export of other files there", "export", true, false},
		{"nothing there", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv.Prefix = prefix + "-rollback" + itoa(i)
			u := srv.URL()
			e := newS3Env(t, srv, "m")
			e.sessions(1, 0)
			id, tr := e.ids[0], e.transcriptPath(e.ids[0])
			old := time.Now().Add(-72 * time.Hour)
			appendRecord := func(text string) {
				f, err := os.OpenFile(tr, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(`{"type":"user","sessionId":"` + id + `","message":{"role":"user","content":"` + text + `"}}` + "\n")
				f.Close()
			}
			var want archivedList
			var exported map[string]string
			switch c.earlier {
			case "export":
				// Without the purge's backups, which an export leaves
				// out and an archive carries: the same files.
				backups, _ := filepath.Glob(tr + ".backup.*")
				for _, b := range backups {
					os.Remove(b)
				}
				exported = snapshotFiles(t, filepath.Join(e.cfg, "projects"))
				e.ok("export", "--session", id, "-o", u)
			case "archive":
				exported = snapshotFiles(t, filepath.Join(e.cfg, "projects"))
				env := e.env
				e.env = append(e.env, "CCM_TEST_ARCHIVE_KILL=archive-synced")
				if _, _, code := e.run("archive", "--older-than", "1d", "--to", u); code == 0 {
					t.Fatal("the first archive was not killed")
				}
				e.env = env
			}
			if c.earlier != "" {
				json.Unmarshal([]byte(e.ok("--json", "sessions", "--archived", "--from", u)), &want)
				if len(want.Sessions) != 1 {
					t.Fatalf("the earlier archive is not listed: %+v", want)
				}
			}
			if c.changed {
				appendRecord("after the export")
				os.Chtimes(tr, old, old)
			}
			// A record appended once the archive is packed: at its upload's
			// first request for the session's manifest.
			var once sync.Once
			var mu sync.Mutex
			sent := false
			proxy := newHookProxy(t, srv.Endpoint, func(r *http.Request) {
				if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, id+archive.ManifestExt) {
					once.Do(func() { appendRecord("written during the archive") })
				}
				if r.Method == http.MethodPut {
					mu.Lock()
					sent = true
					mu.Unlock()
				}
			})
			env := e.env
			e.env = append(e.env, "CCM_S3_ENDPOINT="+proxy)
			out, errs, code := e.run("archive", "--older-than", "1d", "--to", u)
			e.env = env
			if !strings.Contains(out, "archived 0 of 1") || !strings.Contains(errs, "left in place") {
				t.Fatalf("archive of a session written meanwhile: exit %d\n%s%s", code, out, errs)
			}
			if data, err := os.ReadFile(tr); err != nil || !strings.Contains(string(data), "written during the archive") {
				t.Fatalf("the session is not in place with what was written: %v", err)
			}
			if mu.Lock(); sent == c.kept {
				t.Errorf("the upload sent an archive: %v; want %v", sent, !c.kept)
			}
			mu.Unlock()
			var got archivedList
			json.Unmarshal([]byte(e.ok("--json", "sessions", "--archived", "--from", u)), &got)
			if len(got.Sessions) != len(want.Sessions) || len(want.Sessions) == 1 && got.Sessions[0].Archive != want.Sessions[0].Archive {
				t.Fatalf("after the rollback the bucket lists %+v, before the archive it listed %+v", got.Sessions, want.Sessions)
			}
			l, err := e.target(t).List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range l.Archives {
				verifyListed(t, e.target(t), a, exported)
			}
			if len(l.Incomplete) != 0 {
				t.Errorf("the rollback left archive objects no manifest names: %v", l.Incomplete)
			}
		})
	}
	srv.Prefix = prefix
}
