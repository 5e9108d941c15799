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
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	// Old enough not to be taken for live ones, before the purge and
	// after it (a purge writes them).
	age := func() {
		for _, id := range e.ids {
			os.Chtimes(filepath.Join(e.cfg, "projects", e.folder, id+".jsonl"), old, old)
		}
	}
	age()
	if out := e.ok("purge", "--all", "--threshold", "500"); !strings.Contains(out, fmt.Sprintf("purged %d of %d", n, n)) {
		e.t.Fatalf("purge: %s", out)
	}
	age()
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

// TestS3ImportObjectURL: import of one object's URL imports that
// object, not the newest archive of its session, which another machine
// wrote after it.
func TestS3ImportObjectURL(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(1, 0)
	id := a.ids[0]
	a.ok("export", "--session", id, "-o", url)
	b := newS3Env(t, srv, "desktop")
	dest, _ := filepath.EvalSymlinks(t.TempDir())
	b.ok("import", url, id, "--cwd", dest)
	b.ok("export", "--session", id, "-o", url)
	var listed struct {
		Sessions []struct {
			Archive string `json:"archive"`
			Machine string `json:"machine"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(a.ok("--json", "sessions", "--archived", "--from", url)), &listed)
	laptop := ""
	for _, s := range listed.Sessions {
		if s.Machine == "laptop" {
			laptop = s.Archive
		}
	}
	if len(listed.Sessions) != 2 || laptop == "" {
		t.Fatalf("listed %+v, want the laptop's and the desktop's", listed.Sessions)
	}
	c := newS3Env(t, srv, "ci")
	var plan struct {
		Sessions []struct {
			Bundle  string `json:"bundle"`
			Machine string `json:"machine"`
			OldRoot string `json:"old_root"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(c.ok("--json", "import", "-n", laptop, "--cwd", dest)), &plan)
	if len(plan.Sessions) != 1 || plan.Sessions[0].Bundle != laptop || plan.Sessions[0].Machine != "laptop" || plan.Sessions[0].OldRoot != a.root {
		t.Errorf("import %s read %+v", laptop, plan.Sessions)
	}
	gone := strings.Replace(laptop, ".tar.zst", "0.tar.zst", 1)
	if _, errs, code := c.run("import", "-n", gone, "--cwd", dest); code != 2 || !strings.Contains(errs, "no complete bundle there") {
		t.Errorf("import of an object that is not there: exit %d, %s", code, errs)
	}
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
	// Exported again, the same files: the bundle there is kept, and the
	// destination said is the object's (its name holds its SHA-256).
	var exported struct {
		Sessions []struct {
			Dest string `json:"destination"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(a.ok("--json", "export", "--session", one[:8], "-o", url)), &exported)
	var listed struct {
		Sessions []struct {
			ID      string `json:"session"`
			Archive string `json:"archive"`
			Machine string `json:"machine"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(a.ok("--json", "sessions", "--archived", "--from", url)), &listed)
	if len(listed.Sessions) != 1 || len(exported.Sessions) != 1 || exported.Sessions[0].Dest != listed.Sessions[0].Archive {
		t.Errorf("export said it wrote %+v, the bucket holds %+v", exported.Sessions, listed.Sessions)
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
	// The archive holds the purge's backup, which an export leaves out:
	// it replaces the exported bundle of the first session.
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
