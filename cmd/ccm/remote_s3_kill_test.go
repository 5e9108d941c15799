// Object storage under kill -9: archive --to s3 and export -o s3 killed at
// random points of their upload and at each named step, against a real
// MinIO (scripts/test-s3.sh).

package main

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/internal/objstore/s3test"
)

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
