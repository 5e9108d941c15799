package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ccm/internal/fsutil"
	"ccm/sessions/archive"
)

// bucketArchive moves an archive out of the local archive folder, as if
// it were in object storage at url, and returns the listing's entry,
// whose Fetch copies it (and its sidecar) and counts the downloads.
func bucketArchive(t *testing.T, arc, url string, fetches *int, fail *error) RemoteArchive {
	t.Helper()
	dir := t.TempDir()
	moved := filepath.Join(dir, filepath.Base(arc))
	for _, p := range [][2]string{{arc, moved}, {archive.SidecarPath(arc), archive.SidecarPath(moved)}} {
		if err := os.Rename(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := archive.ReadSidecar(archive.SidecarPath(moved))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(moved)
	cp := func(src, dst string) error {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		return fsutil.WriteFile(dst, fsutil.FileMode, func(w io.Writer) error { _, err := io.Copy(w, in); return err })
	}
	return RemoteArchive{URL: url, Folder: m.Folder, Session: m.Session, Size: fi.Size(), Created: m.Created,
		Fetch: func(ctx context.Context, dest string) error {
			*fetches++
			if *fail != nil {
				return *fail
			}
			if err := cp(moved, dest); err != nil {
				return err
			}
			return cp(archive.SidecarPath(moved), archive.SidecarPath(dest))
		}}
}

// Archives in object storage: indexed once each, searched only by a
// query that names their place, kept by updates that do not list it,
// dropped (with their parts) when its listing no longer has them.
func TestRemoteArchives(t *testing.T) {
	e := newEnv(t, "")
	sid := "dddddddd-0000-4000-8000-000000000004"
	const target = "s3://team/sessions"
	url := target + "/laptop/-w/" + sid + ".0123456789abcdef.tar.zst"
	fetches := 0
	var fail error
	a := bucketArchive(t, e.archived(sid), url, &fetches, &fail)
	e.remote = &Remote{URL: target, Archives: []RemoteArchive{a}}
	here := func(q *Query) { q.Remote = target; q.Unarchive = "ccm unarchive --from " + target }

	hits := e.search("ibexes", here)
	if len(hits) != 3 || fetches != 1 {
		t.Fatalf("%d hits, %d downloads; want the prompt, the stubbed output and the subagent's reply from one download: %+v", len(hits), fetches, hits)
	}
	for _, h := range hits {
		if !h.Archived || h.Machine != "laptop" || h.Path != url || h.Resume != "ccm unarchive --from "+target+" "+sid+" && cd /w && claude --resume "+sid {
			t.Errorf("hit %+v", h)
		}
	}
	e.search("ibexes", here)
	if fetches != 1 {
		t.Errorf("a second search downloaded the archive again (%d downloads)", fetches)
	}
	if left, _ := os.ReadDir(fetchDir(Dir(e.home))); len(left) != 0 {
		t.Errorf("downloads left: %v", left)
	}

	// Not named, or another place: not searched, and kept.
	e.remote = nil
	e.none("ibexes")
	e.none("ibexes", func(q *Query) { q.Archived = true })
	for _, other := range []string{"s3://team", "s3://team/sessions/laptop", "s3://other/sessions"} {
		e.none("ibexes", func(q *Query) { q.Remote = other })
	}
	if st := e.update(); st.Removed != 0 {
		t.Errorf("an update without the remote removed %d entries", st.Removed)
	}
	e.remote = &Remote{URL: target, Archives: []RemoteArchive{a}}
	if hits := e.search("ibexes", here); len(hits) != 3 || fetches != 1 {
		t.Errorf("after updates without the remote: %d hits, %d downloads", len(hits), fetches)
	}
	parts, _ := filepath.Glob(filepath.Join(Dir(e.home), "parts", remoteParts, "*.part"))
	if len(parts) != 1 {
		t.Fatalf("parts of the remote: %v", parts)
	}

	// Gone from the bucket: its entry and its part go.
	e.remote = &Remote{URL: target}
	if st := e.update(); st.Removed != 1 { // the archive's one entry
		t.Errorf("update after the archive left the bucket: %+v", st)
	}
	if _, err := os.Stat(parts[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the part of an archive gone from the bucket is still there: %v", err)
	}

	// A download that does not match its manifest indexes as empty; a
	// server that fails fails the update, and the next one downloads it.
	fail = archive.ErrCorrupt
	a2 := a
	a2.URL = target + "/laptop/-w/" + sid + ".fedcba9876543210.tar.zst"
	a2.Created = a.Created.Add(time.Second)
	e.remote = &Remote{URL: target, Archives: []RemoteArchive{a2}}
	e.none("ibexes", here)
	fail = errors.New("the server went away")
	a3 := a2
	a3.URL = target + "/laptop/-w/" + sid + ".aaaaaaaaaaaaaaaa.tar.zst"
	e.remote = &Remote{URL: target, Archives: []RemoteArchive{a3}}
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Update(context.Background(), e.sources()); err == nil || err.Error() != "the server went away" {
		t.Errorf("update with a failing server: %v", err)
	}
	ix.Close()
	fail = nil
	if hits := e.search("ibexes", here); len(hits) != 3 {
		t.Errorf("after the server came back: %d hits", len(hits))
	}
}

// Many archives in object storage, most of them corrupt: the downloads
// run ahead of the workers, and those that fail hold no place in the
// queue (more of them than the queue holds, then good ones).
func TestRemoteArchivesPrefetch(t *testing.T) {
	e := newEnv(t, "")
	const target = "s3://team/sessions"
	var archives []RemoteArchive
	fetches := 0
	var mu sync.Mutex
	bad, good := fetchQueue+fetchAhead+2, 3
	for i := range bad + good {
		sid := fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", i)
		var fail error
		if i < bad {
			fail = archive.ErrCorrupt
		}
		n := 0
		a := bucketArchive(t, e.archived(sid), target+"/m/-w/"+sid+".0123456789abcdef.tar.zst", &n, &fail)
		fetch := a.Fetch
		a.Fetch = func(ctx context.Context, dest string) error {
			mu.Lock()
			fetches++
			mu.Unlock()
			return fetch(ctx, dest)
		}
		a.Created = time.Unix(int64(1000+i), 0) // the order the workers take them
		archives = append(archives, a)
	}
	e.remote = &Remote{URL: target, Archives: archives}
	seen := map[string]bool{}
	for _, h := range e.search("ibexes", func(q *Query) { q.Remote = target; q.Limit = 1000 }) {
		seen[h.Session] = true
	}
	if len(seen) != good || fetches != bad+good {
		t.Errorf("hits of %d sessions (want %d), %d downloads (want %d)", len(seen), good, fetches, bad+good)
	}
	if left, _ := os.ReadDir(fetchDir(Dir(e.home))); len(left) != 0 {
		t.Errorf("downloads left: %v", left)
	}
}

// What a killed update left in fetch/ (downloads, each maybe gigabytes)
// goes at the next update, whether or not it indexes object storage.
func TestRemoteDownloadsLeftGo(t *testing.T) {
	e := newEnv(t, "")
	e.update()
	left := filepath.Join(fetchDir(Dir(e.home)), "123", "x"+archive.Ext)
	if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(left, []byte("half a download"), 0o600)
	e.update()
	if _, err := os.Stat(fetchDir(Dir(e.home))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a download a killed update left is still there after an update: %v", err)
	}
}

// An archive whose session id is too long for a file name (a bucket is
// input from outside) is downloaded under a name of the update's own: it
// does not fail every search of the bucket.
func TestRemoteArchiveLongID(t *testing.T) {
	e := newEnv(t, "")
	sid := "ffffffff-0000-4000-8000-000000000006"
	const target = "s3://team/sessions"
	fetches := 0
	var fail error
	a := bucketArchive(t, e.archived(sid), target+"/m/-w/x.0123456789abcdef.tar.zst", &fetches, &fail)
	a.Session = strings.Repeat("x", 250)
	e.remote = &Remote{URL: target, Archives: []RemoteArchive{a}}
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Update(context.Background(), e.sources()); err != nil || fetches != 1 {
		t.Errorf("update over an archive of a long session id: %v (%d downloads)", err, fetches)
	}
}
