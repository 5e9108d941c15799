package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccm/internal/objstore"
	"ccm/internal/objstore/s3http"
	"ccm/internal/objstore/s3test"
	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/sessions/archive"
	"ccm/sessions/remote"
	"ccm/transcript"
)

// These tests run against a real S3-compatible server (scripts/minio.sh
// starts MinIO for scripts/test-s3.sh); without one they are skipped.

// s3env is one machine: a config dir, its ccm home and store, and the
// environment that reaches the server.
type s3env struct {
	t       *testing.T
	cfg     string
	home    string // ccm's home
	env     []string
	srv     s3test.Server
	root    string // the project's working directory
	folder  string
	ids     []string
	machine string
}

func newS3Env(t *testing.T, srv s3test.Server, machine string) *s3env {
	helperBinary(t)
	dir := t.TempDir()
	e := &s3env{t: t, cfg: filepath.Join(dir, "claude"), home: filepath.Join(dir, "ccmhome"), srv: srv, machine: machine}
	os.MkdirAll(filepath.Join(e.cfg, "projects"), 0o700)
	e.env = append(append(os.Environ(), srv.Env()...), "CLAUDE_CONFIG_DIR="+e.cfg, "CCM_HOME="+e.home,
		"CCM_CACHE_DIR="+filepath.Join(dir, "store"), "CCM_MACHINE="+machine, "HOME="+dir)
	return e
}

// sessions writes n generated sessions of a project, 3 days old, with a
// spilled tool output of extra random bytes each, and purges them so
// their transcripts hold stubs.
func (e *s3env) sessions(n int, extra int) {
	e.t.Helper()
	e.root = "/home/dev/app"
	e.folder = transcript.EncodeProjectDir(e.root)
	old := time.Now().Add(-72 * time.Hour)
	for i := 0; i < n; i++ {
		id := newSessionID()
		e.ids = append(e.ids, id)
		p := filepath.Join(e.cfg, "projects", e.folder, id+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		var buf bytes.Buffer
		if _, err := synth.Generate(&buf, synth.Options{Seed: int64(i + 1), TargetBytes: 300 << 10, SessionID: id, Cwd: e.root}); err != nil {
			e.t.Fatal(err)
		}
		os.WriteFile(p, buf.Bytes(), 0o600)
		if extra > 0 {
			r := make([]byte, extra)
			rand.Read(r)
			tr := filepath.Join(e.cfg, "projects", e.folder, id, "tool-results", "toolu_big.txt")
			os.MkdirAll(filepath.Dir(tr), 0o700)
			os.WriteFile(tr, r, 0o600)
			os.Chtimes(tr, old, old)
		}
	}
	e.ok("purge", "--all", "--threshold", "500")
	for _, id := range e.ids {
		os.Chtimes(filepath.Join(e.cfg, "projects", e.folder, id+".jsonl"), old, old)
	}
}

// run runs the ccm binary; it returns stdout, stderr and the exit code.
func (e *s3env) run(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(builtBinary(e.t), args...)
	cmd.Env = e.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (e *s3env) ok(args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("ccm %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (e *s3env) transcriptPath(id string) string {
	return filepath.Join(e.cfg, "projects", e.folder, id+".jsonl")
}

// snapshot is every file under the config dir's projects/ with its bytes.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func TestS3ExportImportArchive(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(3, 0)
	before := snapshotFiles(t, filepath.Join(a.cfg, "projects"))
	one, two := a.ids[0], a.ids[1]

	out := a.ok("export", "--session", one[:8], "-o", url)
	if !strings.Contains(out, "exported 1 of 1 sessions") {
		t.Errorf("export: %s", out)
	}
	if _, err := os.Stat(a.transcriptPath(one)); err != nil {
		t.Fatalf("export moved the session: %v", err)
	}
	// A dry run reads the bucket and writes nothing of ccm's.
	if out := a.ok("archive", "-n", "--older-than", "1d", "--to", url); !strings.Contains(out, "would archive 3 sessions") {
		t.Errorf("archive -n --to s3: %s", out)
	}
	if _, err := os.Stat(filepath.Join(a.home, "tmp", "archive-s3")); !os.IsNotExist(err) {
		t.Errorf("archive -n --to s3 made its staging folder: %v", err)
	}
	a.ok("archive", "--older-than", "1d", "--to", url)
	for _, id := range a.ids {
		if _, err := os.Stat(a.transcriptPath(id)); !os.IsNotExist(err) {
			t.Errorf("%s: still here after archive --to s3: %v", id, err)
		}
	}
	var listed struct {
		Sessions []struct {
			ID      string `json:"session"`
			Archive string `json:"archive"`
			Machine string `json:"machine"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(a.ok("--json", "sessions", "--archived", "--from", url)), &listed)
	if len(listed.Sessions) != 3 {
		t.Fatalf("listed %d archives, want 3: %+v", len(listed.Sessions), listed)
	}
	for _, s := range listed.Sessions {
		if !strings.HasPrefix(s.Archive, url+"/laptop/"+a.folder+"/") || s.Machine != "laptop" {
			t.Errorf("archive %s is not under this machine's prefix", s.Archive)
		}
	}

	// Machine B: import one at another path under a new id; every stub
	// restores from B's store.
	b := newS3Env(t, srv, "desktop")
	dest := t.TempDir()
	dest, _ = filepath.EvalSymlinks(dest)
	if out := b.ok("import", "-n", url, one[:8], "--cwd", dest, "--new-id"); !strings.Contains(out, "would import 1 of 1 sessions") {
		t.Errorf("import -n s3: %s", out)
	}
	if left := filesUnder(b.home); len(left) != 0 {
		t.Errorf("import -n s3 wrote %v", left)
	}
	out = b.ok("import", url, one[:8], "--cwd", dest, "--new-id")
	if !strings.Contains(out, "resume: cd "+dest+" && claude --resume ") {
		t.Errorf("import: %s", out)
	}
	m, _ := filepath.Glob(filepath.Join(b.cfg, "projects", transcript.EncodeProjectDir(dest), "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("imported transcripts: %v", m)
	}
	if out := b.ok("restore", m[0]); !strings.Contains(out, "restored ") {
		t.Errorf("restore in B: %s", out)
	}

	// The selectors of local archives: a unique prefix of 6 characters.
	json.Unmarshal([]byte(a.ok("--json", "sessions", "--archived", "--from", url, "--session", two[:6])), &listed)
	if len(listed.Sessions) != 1 || listed.Sessions[0].ID != two {
		t.Errorf("sessions --archived --from --session %s: %+v", two[:6], listed.Sessions)
	}

	// Machine C: a dry run downloads and verifies every archive, and
	// leaves nothing, here or in the staging folders.
	c := newS3Env(t, srv, "ci")
	if out := c.ok("unarchive", "-n", "--from", url, "--all"); !strings.Contains(out, "would restore 3 of 3 sessions") {
		t.Errorf("unarchive -n --from --all: %s", out)
	}
	if left := filesUnder(filepath.Join(c.cfg, "projects")); len(left) != 0 {
		t.Errorf("unarchive -n --from wrote %v", left)
	}
	if left := filesUnder(c.home); len(left) != 0 {
		t.Errorf("unarchive -n --from left %v", left)
	}
	// Then one, byte for byte, where it was.
	c.ok("unarchive", "--from", url, two)
	got := snapshotFiles(t, filepath.Join(c.cfg, "projects"))
	for rel, data := range before {
		if strings.Contains(rel, two) && !strings.Contains(rel, ".backup.") && got[rel] != data {
			t.Errorf("%s: not restored byte for byte", rel)
		}
	}
	// The archive stays in the bucket: unarchived again it changes
	// nothing; once the session here is written to, it is refused.
	c.ok("unarchive", "--from", url, two)
	if again := snapshotFiles(t, filepath.Join(c.cfg, "projects")); !maps.Equal(again, got) {
		t.Error("a second unarchive of the same archive changed the session")
	}
	c.ok("restore", filepath.Join(c.cfg, "projects", a.folder, two+".jsonl"))
	// The session resumed here: a record appended.
	f, _ := os.OpenFile(filepath.Join(c.cfg, "projects", a.folder, two+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"user","sessionId":"` + two + `","message":{"role":"user","content":"resumed"}}` + "\n")
	f.Close()
	resumed := snapshotFiles(t, filepath.Join(c.cfg, "projects"))
	if _, errs, code := c.run("unarchive", "--from", url, two); code == 0 || !strings.Contains(errs, "already exists") {
		t.Errorf("unarchive over a session written since: %d %s", code, errs)
	}
	if now := snapshotFiles(t, filepath.Join(c.cfg, "projects")); !maps.Equal(now, resumed) {
		t.Error("a refused unarchive changed the session")
	}
	if left := filesUnder(filepath.Join(c.home, "tmp")); len(left) != 0 {
		t.Errorf("unarchive --from left %v", left)
	}

	// ccm maintain archives into the bucket when CCM_ARCHIVE_TO says so,
	// under this machine's name; a folder there is refused.
	d := newS3Env(t, srv, "nightly")
	d.sessions(1, 0)
	d.env = append(d.env, "CCM_ARCHIVE_OLDER_THAN_DAYS=1", "CCM_ARCHIVE_TO="+url)
	if out := d.ok("maintain"); !strings.Contains(out, "archived 1 sessions") {
		t.Errorf("maintain: %q", out)
	}
	l, err := d.target(t).List(context.Background())
	found := false
	for _, a := range l.Archives {
		found = found || a.Machine == "nightly" && a.Manifest.Session == d.ids[0]
	}
	if err != nil || !found {
		t.Errorf("maintain's archive is not listed under nightly: %v", err)
	}
	d.env = append(d.env, "CCM_ARCHIVE_TO=/some/folder")
	if _, errs, code := d.run("maintain"); code != 2 || !strings.Contains(errs, "want s3://BUCKET/PREFIX") {
		t.Errorf("CCM_ARCHIVE_TO as a folder: %d %s", code, errs)
	}
}

// cutProxy forwards to the server and, once more than limit bytes went
// up, drops every connection and stops listening: a server that goes
// away in the middle of an upload. rate, when set, limits the bytes per
// second going up.
type cutProxy struct {
	ln    net.Listener
	limit int64
	rate  int64
	sent  atomic.Int64
	mu    sync.Mutex
	conns []net.Conn
	cut   atomic.Bool
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
			go func() { io.Copy(c, s); c.Close() }()
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

// TestS3KillTrials kills ccm archive --to s3 and ccm export -o s3 with
// SIGKILL at random points of their upload, CCM_S3_KILL_TRIALS times
// (scripts/test-s3.sh: 30): the originals stay until the archive is
// complete in the bucket, nothing incomplete is ever listed, what is
// listed verifies, and the next run finishes the job.
func TestS3KillTrials(t *testing.T) {
	n := int(envInt("CCM_S3_KILL_TRIALS"))
	if n == 0 {
		t.Skip("set CCM_S3_KILL_TRIALS (scripts/test-s3.sh runs 30)")
	}
	srv := s3test.Need(t)
	killedMid := 0
	states := map[string]int{}
	var span time.Duration // how long an uninterrupted run takes: the first trial measures it
	for trial := 0; trial < n+1; trial++ {
		srv.Prefix = srv.Prefix + "-k" + string(rune('a'+trial%26)) + itoa(trial)
		e := newS3Env(t, srv, "m")
		e.sessions(1, 12<<20)
		proxy := newCutProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 0, 8<<20) // about 1.5 s of upload
		e.env = append(e.env, "CCM_S3_ENDPOINT="+proxy.endpoint())
		before := snapshotFiles(t, filepath.Join(e.cfg, "projects"))
		args := []string{"archive", "--older-than", "1d", "--to", srv.URL()}
		if trial%2 == 1 {
			args = []string{"export", "--all", "-o", srv.URL()}
		}
		cmd := exec.Command(builtBinary(t), args...)
		cmd.Env = e.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// Half the kills anywhere in the run, half in its last fifth (the
		// manifest's upload, the originals' removal).
		delay := time.Duration(randInt(int(span/time.Millisecond)+1)) * time.Millisecond
		if trial%4 >= 2 {
			delay = span - time.Duration(randInt(int(span/5/time.Millisecond)+1))*time.Millisecond
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if trial == 0 {
			if err := <-done; err != nil {
				t.Fatalf("the measuring run failed: %v", err)
			}
			span = time.Since(start)
			continue
		}
		select {
		case <-done:
		case <-time.After(delay):
			cmd.Process.Kill()
			<-done
			killedMid++
			// Its helper does not outlive it: no upload of this run
			// finishes after the next run's.
			if left := helpersRunning(t, 2*time.Second); left > 0 {
				t.Fatalf("trial %d: %d ccm-s3 helpers outlive their killed ccm", trial, left)
			}
		}
		tg := e.target(t)
		l, err := tg.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		after := snapshotFiles(t, filepath.Join(e.cfg, "projects"))
		gone := 0
		for rel := range before {
			if _, ok := after[rel]; !ok {
				gone++
			}
		}
		t.Logf("trial %d: %s killed after %s: %d archives, %d incomplete, %d originals gone", trial, args[0], delay, len(l.Archives), len(l.Incomplete), gone)
		switch {
		case len(l.Archives) == 1 && gone > 0:
			states["archive listed, originals gone"]++
		case len(l.Archives) == 1:
			states["archive listed, originals kept"]++
		case len(l.Incomplete) > 0:
			states["upload cut: an archive object without its manifest, not listed"]++
		default:
			states["nothing in the bucket"]++
		}
		if gone > 0 && len(l.Archives) != 1 {
			t.Fatalf("trial %d (%s after %s): %d originals gone, %d complete archives listed", trial, args[0], delay, gone, len(l.Archives))
		}
		for _, a := range l.Archives {
			verifyListed(t, tg, a, before)
		}
		// The next run finishes the job.
		e.env = append(e.env, "CCM_S3_ENDPOINT="+srv.Endpoint)
		e.ok(args...)
		l, _ = tg.List(context.Background())
		if len(l.Archives) != 1 {
			t.Fatalf("trial %d: after the second run %d archives listed", trial, len(l.Archives))
		}
		verifyListed(t, tg, l.Archives[0], before)
		after = snapshotFiles(t, filepath.Join(e.cfg, "projects"))
		if args[0] == "archive" && len(after) != 0 || args[0] == "export" && !maps.Equal(after, before) {
			t.Fatalf("trial %d: after the second %s, %d of %d files in place", trial, args[0], len(after), len(before))
		}
		if left := filesUnder(filepath.Join(e.home, "tmp")); len(left) != 0 {
			t.Fatalf("trial %d: the second %s left %v", trial, args[0], left)
		}
		proxy.close()
	}
	t.Logf("%d trials (a run takes %s), %d killed before they finished; after the kill: %v", n, span.Round(time.Millisecond), killedMid, states)
}

// TestS3KilledSteps kills archive --to s3:// and unarchive --from s3:// at
// each named step of the archive package (as archive_kill_test does for
// local archives): the next run, the same command, finishes the job from
// the staging folder, with nothing lost and nothing left there.
func TestS3KilledSteps(t *testing.T) {
	srv := s3test.Need(t)
	prefix := srv.Prefix
	for i, step := range []string{"archive-packed", "archive-linked", "archive-published", "archive-synced", "archive-removing", "archive-removed"} {
		srv.Prefix = prefix + "-step" + itoa(i)
		e := newS3Env(t, srv, "m")
		e.sessions(1, 0)
		before := snapshotFiles(t, filepath.Join(e.cfg, "projects"))
		args := []string{"archive", "--older-than", "1d", "--to", srv.URL()}
		env := e.env
		e.env = append(e.env, "CCM_TEST_ARCHIVE_KILL="+step)
		if _, _, code := e.run(args...); code == 0 {
			t.Fatalf("%s: the run was not killed", step)
		}
		e.env = env
		e.ok(args...)
		if left := snapshotFiles(t, filepath.Join(e.cfg, "projects")); len(left) != 0 {
			t.Errorf("%s: %d files of the session left in place", step, len(left))
		}
		l, err := e.target(t).List(context.Background())
		if err != nil || len(l.Archives) != 1 {
			t.Fatalf("%s: listed %+v, %v", step, l, err)
		}
		verifyListed(t, e.target(t), l.Archives[0], before)
		if left := filesUnder(filepath.Join(e.home, "tmp")); len(left) != 0 {
			t.Errorf("%s: left %v", step, left)
		}

		// Unarchive it on another machine, killed at a step of its own.
		ustep := []string{"unarchive-staging", "unarchive-staged", "unarchive-committed", "unarchive-renaming", "unarchive-restored", "unarchive-removed"}[i]
		c := newS3Env(t, srv, "c")
		c.env = append(c.env, "CCM_TEST_ARCHIVE_KILL="+ustep)
		if _, _, code := c.run("unarchive", "--from", srv.URL(), e.ids[0]); code == 0 {
			t.Fatalf("%s: the run was not killed", ustep)
		}
		c.env = c.env[:len(c.env)-1]
		c.ok("unarchive", "--from", srv.URL(), e.ids[0])
		if got := snapshotFiles(t, filepath.Join(c.cfg, "projects")); !maps.Equal(got, before) {
			t.Errorf("%s: the session is not back byte for byte (%d of %d files)", ustep, len(got), len(before))
		}
		if left := filesUnder(filepath.Join(c.home, "tmp")); len(left) != 0 {
			t.Errorf("%s: left %v", ustep, left)
		}
	}
}

// filesUnder lists the files (not folders) under dir.
func filesUnder(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// helpersRunning counts, after waiting up to wait for them to go, the
// ccm-s3 processes of the helper these tests built (Linux: /proc; 0
// elsewhere).
func helpersRunning(t *testing.T, wait time.Duration) int {
	if runtime.GOOS != "linux" {
		return 0
	}
	helper := filepath.Join(filepath.Dir(builtBinary(t)), "ccm-s3")
	deadline := time.Now().Add(wait)
	for {
		n := 0
		procs, _ := filepath.Glob("/proc/[0-9]*/exe")
		for _, p := range procs {
			if exe, err := os.Readlink(p); err == nil && exe == helper {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *s3env) target(t *testing.T) *remote.Target {
	c, err := s3http.New(e.srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &remote.Target{Client: c, Loc: objstore.Location{Bucket: e.srv.Bucket, Prefix: e.srv.Prefix}, Machine: e.machine}
}

var helperBuilt struct {
	once sync.Once
	err  error
}

// helperBinary builds ccm-s3 beside the ccm the tests run, where ccm
// looks for it.
func helperBinary(t *testing.T) {
	t.Helper()
	dir := filepath.Dir(builtBinary(t))
	helperBuilt.once.Do(func() {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "ccm-s3"), "ccm/cmd/ccm-s3")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			helperBuilt.err = fmt.Errorf("go build ccm-s3: %v\n%s", err, out)
		}
	})
	if helperBuilt.err != nil {
		t.Fatal(helperBuilt.err)
	}
}

// verifyListed downloads a listed archive and checks it whole, and that
// every file in it is the original's bytes.
func verifyListed(t *testing.T, tg *remote.Target, l remote.Listed, before map[string]string) {
	t.Helper()
	p := archive.ArchivePath(t.TempDir(), l.Manifest.Folder, l.Manifest.Session)
	if err := tg.Fetch(context.Background(), l, p); err != nil {
		t.Fatalf("a listed archive does not download whole: %v", err)
	}
	m, err := archive.PeekManifest(p)
	if err != nil {
		t.Fatalf("a listed archive does not verify: %v", err)
	}
	_, err = archive.Read(context.Background(), p, m, archive.ReadOptions{File: func(e archive.Entry, r io.Reader) error {
		data, _ := io.ReadAll(r)
		if want, ok := before[strings.TrimPrefix(e.Path, "projects/")]; ok && want != string(data) {
			t.Errorf("%s in the archive differs from the original", e.Path)
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("a listed archive does not verify: %v", err)
	}
}

func randInt(n int) int {
	var b [4]byte
	rand.Read(b[:])
	return int(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24) % n
}

func itoa(n int) string { return strconv.Itoa(n) }
