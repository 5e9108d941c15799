// Object storage refusing to work: wrong credentials, a missing bucket, and
// a server that goes away in the middle of an upload (a proxy that cuts the
// connection), each leaving everything in place.

package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/objstore"
	"ccm/internal/objstore/s3test"
	"ccm/sessions/remote"
)

// cutProxy forwards to the server and, once more than limit bytes went
// up, drops every connection and stops listening: a server that goes
// away in the middle of an upload. rate, when set, limits the bytes per
// second going up. downLimit, when set, does the same to the bytes coming
// down (a download); recv counts them.
type cutProxy struct {
	ln        net.Listener
	limit     int64
	rate      int64
	downLimit int64
	sent      atomic.Int64
	recv      atomic.Int64
	mu        sync.Mutex
	conns     []net.Conn
	cut       atomic.Bool
}

func newCutProxy(t *testing.T, target string, limit, rate int64) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, limit: limit, rate: rate}
	t.Cleanup(p.close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go p.down(c, s)
			go p.up(c, s)
		}
	}()
	return p
}

func (p *cutProxy) up(c, s net.Conn) {
	buf := make([]byte, 32<<10)
	start := time.Now()
	for {
		n, err := c.Read(buf)
		if n > 0 {
			total := p.sent.Add(int64(n))
			if p.limit > 0 && total > p.limit {
				p.close()
				return
			}
			if p.rate > 0 {
				if ahead := time.Duration(float64(total)/float64(p.rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			s.Close()
			return
		}
	}
}

func (p *cutProxy) down(c, s net.Conn) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if total := p.recv.Add(int64(n)); p.downLimit > 0 && total > p.downLimit {
				p.close()
				return
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) close() {
	p.cut.Store(true)
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

// TestS3Refusals: wrong credentials, a missing bucket, a server that goes
// away in the middle of an upload: one line, a non-zero exit, every
// original in place, nothing listed.
func TestS3Refusals(t *testing.T) {
	srv := s3test.Need(t)
	for _, c := range []struct {
		name string
		env  func(e *s3env) []string
		url  string
		want string
	}{
		{"wrong secret", func(*s3env) []string { return []string{"AWS_SECRET_ACCESS_KEY=wrong-secret"} }, srv.URL(), "the secret access key is wrong"},
		{"unknown key", func(*s3env) []string { return []string{"AWS_ACCESS_KEY_ID=nosuchkey"} }, srv.URL(), "does not know the access key"},
		{"missing bucket", func(*s3env) []string { return nil }, "s3://no-such-bucket-ccm/x", "the bucket does not exist"},
		{"server gone mid-upload", func(e *s3env) []string {
			p := newCutProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 2<<20, 0)
			return []string{"CCM_S3_ENDPOINT=" + p.endpoint()}
		}, srv.URL(), "upload "},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newS3Env(t, srv, "m")
			e.sessions(1, 6<<20)
			before := snapshotFiles(t, filepath.Join(e.cfg, "projects"))
			base := e.env
			for _, args := range [][]string{{"archive", "--older-than", "1d", "--to", c.url}, {"export", "--all", "-o", c.url}} {
				e.env = append(append([]string(nil), base...), c.env(e)...)
				out, errs, code := e.run(args...)
				lines := strings.Split(strings.TrimSpace(errs), "\n")
				if code == 0 || len(lines) != 1 || !strings.Contains(errs, c.want) {
					t.Errorf("%s: exit %d, stderr %q (stdout %q); want one line with %q", args[0], code, errs, out, c.want)
				}
				after := snapshotFiles(t, filepath.Join(e.cfg, "projects"))
				if len(after) != len(before) {
					t.Errorf("%s: %d files before, %d after", args[0], len(before), len(after))
				}
				for rel, data := range before {
					if after[rel] != data {
						t.Errorf("%s: %s changed or gone", args[0], rel)
					}
				}
			}
			tg := e.target(t)
			if l, err := tg.List(context.Background()); err != nil || len(l.Archives) != 0 {
				t.Errorf("listed after a refusal: %+v, %v", l, err)
			}
		})
	}
}

// TestS3EmptySelection: with the bucket too, selectors that choose no
// session are nothing to do (exit 0, said on stdout), and a project that
// is nowhere, here or in the bucket, is a wrong name (exit 2).
func TestS3EmptySelection(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(1, 0)
	a.ok("export", "--session", a.ids[0], "-o", url)
	b := newS3Env(t, srv, "desktop")
	for _, c := range []struct {
		e    *s3env
		args []string
		code int
		want string
	}{
		{a, []string{"export", "--all", "--older-than", "30d", "-o", url}, 0, "export: exported 0 of 0 sessions, 0 B into 0 B, to " + url},
		{a, []string{"export", "-n", "--all", "--min-size", "1GB", "-o", url}, 0, "export: would export 0 sessions, 0 B, to " + url},
		{b, []string{"unarchive", "--from", url, "--min-size", "1GB"}, 0, "unarchive: restored 0 of 0 sessions (0 files, 0 stored contents) from " + url + "; 0 failed"},
		{b, []string{"unarchive", "-n", "--from", url, "--project", a.root, "--min-size", "1GB"}, 0, "unarchive: would restore 0 of 0 sessions (0 files, every archive verified) from " + url + "; 0 failed"},
		{b, []string{"unarchive", "--from", url, "--project", "/nowhere"}, 2, "ccm: no project matches /nowhere under "},
	} {
		out, errs, code := c.e.run(c.args...)
		got := out
		if c.code != 0 {
			got = errs
		}
		if code != c.code || !strings.HasPrefix(got, c.want) || c.code == 0 && errs != "" {
			t.Errorf("ccm %v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errs, c.code, c.want)
		}
		if c.code == 0 {
			out, errs, code = c.e.run(append([]string{"--json"}, c.args...)...)
			var v map[string]any
			if code != 0 || errs != "" || json.Unmarshal([]byte(out), &v) != nil {
				t.Errorf("ccm --json %v: exit %d, %q %q", c.args, code, out, errs)
			}
		}
	}
	if left := filesUnder(filepath.Join(b.cfg, "projects")); len(left) != 0 {
		t.Errorf("an unarchive of nothing wrote %v", left)
	}
}

// TestS3ExportWaitsForArchive: export -o s3:// writes the keys archive
// --to s3:// writes, and replaces the session's archive there: it does not
// run while an archive (or maintain) of this ccm home holds the
// maintenance lock; it says so in one line (exit 4) and sends nothing.
func TestS3ExportWaitsForArchive(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(1, 0)
	lk, err := fsutil.LockFile(t.Context(), filepath.Join(a.home, "locks", "maintain.lock"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, errs, code := a.run("export", "--all", "-o", url)
	if code != exitLocked || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "another ccm archive") {
		t.Errorf("export while an archive runs: exit %d, %q", code, errs)
	}
	if l, err := a.target(t).List(context.Background()); err != nil || len(l.Archives)+len(l.Incomplete) != 0 {
		t.Errorf("the bucket after a refused export: %+v, %v", l, err)
	}
	lk.Unlock()
	a.ok("export", "--all", "-o", url)
}

// TestS3RedactedDoesNotReplace: an export --redact to where the bucket
// holds the session as it was is refused for that session (the bucket
// keeps the unredacted archive); elsewhere it goes, says it is redacted in
// its manifest, and an unredacted export may replace it.
func TestS3RedactedDoesNotReplace(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(1, 0)
	id := a.ids[0]
	os.MkdirAll(a.home, 0o700)
	if err := os.WriteFile(filepath.Join(a.home, "redact.txt"), []byte("dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.ok("export", "--session", id, "-o", url)
	listed := func(u string) []remote.Listed {
		t.Helper()
		tg := a.target(t)
		loc, err := objstore.ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		tg.Loc = loc
		l, err := tg.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return l.Archives
	}
	before := listed(url)
	_, errs, code := a.run("export", "--redact", "--session", id, "-o", url)
	if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is not redacted, and a redacted bundle does not replace it") {
		t.Errorf("export --redact over the unredacted archive: exit %d, %q", code, errs)
	}
	if after := listed(url); len(after) != 1 || after[0].URL != before[0].URL || after[0].Manifest.Redacted {
		t.Errorf("the bucket after the refusal: %+v, before %+v", after, before)
	}
	other := url + "/shared"
	a.ok("export", "--redact", "--session", id, "-o", other)
	if l := listed(other); len(l) != 1 || !l[0].Manifest.Redacted {
		t.Fatalf("a redacted export elsewhere: %+v", l)
	}
	a.ok("export", "--session", id, "-o", other)
	if l := listed(other); len(l) != 1 || l[0].Manifest.Redacted {
		t.Errorf("an unredacted export over a redacted one: %+v", l)
	}
}
