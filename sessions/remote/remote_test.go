package remote

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/objstore"
	"ccm/internal/objstore/s3http"
	"ccm/internal/objstore/s3test"
	"ccm/sessions"
	"ccm/sessions/archive"
)

// packed makes a small archive of one session and returns it with its
// manifest (as its sidecar holds it).
func packed(t *testing.T, id, body string) (string, *archive.Manifest) {
	t.Helper()
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(`{"type":"user","cwd":"/home/dev/app","sessionId":"`+id+`","message":{"content":"`+body+`"}}`+"\n"), 0o600)
	fo, err := sessions.ScanFolder(sessions.Project{Folder: "-home-dev-app", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p, err := archive.Pack(context.Background(), archive.Source{ConfigDir: cfg, Session: fo.Sessions[0], Project: "/home/dev/app"},
		archive.Options{Root: t.TempDir(), Level: zstd.SpeedFastest, Now: time.Now(), KeepOriginals: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.Archive, p.Manifest
}

// target is the test server's bucket, reached in process (the ccm-s3
// helper runs the same client; cmd/ccm's tests go through it).
func target(t *testing.T, machine string) (*Target, s3test.Server) {
	s := s3test.Need(t)
	c, err := s3http.New(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &Target{Client: c, Loc: objstore.Location{Bucket: s.Bucket, Prefix: s.Prefix}, Machine: machine}, s
}

func TestUploadListFetch(t *testing.T) {
	ctx := context.Background()
	laptop, srv := target(t, "laptop")
	desktop := *laptop
	desktop.Machine = "desktop"
	const id = "0b6c1c2e-1111-2222-3333-444455556666"
	file, m := packed(t, id, "hello")
	up, err := laptop.Upload(ctx, file, m)
	if err != nil || up.Kept {
		t.Fatalf("upload: %+v, %v", up, err)
	}
	if want := srv.URL("laptop", "-home-dev-app", id+"."+m.ArchiveSHA256[:16]+".tar.zst"); up.URL != want {
		t.Errorf("uploaded to %s, want %s", up.URL, want)
	}
	// The same files again: kept, nothing sent.
	file2, m2 := packed(t, id, "hello")
	if up, err := laptop.Upload(ctx, file2, m2); err != nil || !up.Kept {
		t.Errorf("the same files again: %+v, %v", up, err)
	}
	// Other files: a new archive object, the manifest replaced; the one
	// it named before stays until the upload is committed.
	file4, m4 := packed(t, id, "hello, changed")
	up4, err := laptop.Upload(ctx, file4, m4)
	if err != nil || up4.Kept {
		t.Fatalf("other files: %+v, %v", up4, err)
	}
	superseded := laptop.archiveKey("laptop", "-home-dev-app", id, m.ArchiveSHA256)
	if _, err := laptop.Client.Head(ctx, laptop.Loc.Bucket, superseded); err != nil {
		t.Errorf("the superseded archive went before the commit: %v", err)
	}
	if err := laptop.Commit(ctx, up4); err != nil {
		t.Fatal(err)
	}
	if _, err := laptop.Client.Head(ctx, laptop.Loc.Bucket, superseded); !objstore.IsNotFound(err) {
		t.Errorf("the superseded archive is still there after the commit: %v", err)
	}
	file, m = file4, m4
	// Another machine's copy of the same session lives beside it.
	file3, m3 := packed(t, id, "hello from the desktop")
	if _, err := desktop.Upload(ctx, file3, m3); err != nil {
		t.Fatal(err)
	}
	l, err := laptop.List(ctx)
	if err != nil || len(l.Archives) != 2 || len(l.Incomplete) != 0 {
		t.Fatalf("listing: %+v, %v", l, err)
	}
	if l.Archives[0].Machine != "desktop" || l.Archives[1].Machine != "laptop" {
		t.Errorf("machines: %s, %s", l.Archives[0].Machine, l.Archives[1].Machine)
	}
	path := archive.ArchivePath(t.TempDir(), "-home-dev-app", id)
	if err := laptop.Fetch(ctx, l.Archives[1], path); err != nil {
		t.Fatal(err)
	}
	if got, err := archive.Verify(path); err != nil || got.Session != id {
		t.Errorf("fetched archive: %v", err)
	}

	// An archive object with no manifest (an upload stopped before its
	// commit), and one whose manifest gives another size: not listed.
	half := laptop.archiveKey("ci", "-home-dev-app", id, m.ArchiveSHA256)
	laptop.Client.PutBytes(ctx, laptop.Loc.Bucket, half, []byte("the first bytes of an archive"))
	data, _ := os.ReadFile(file)
	laptop.Client.PutBytes(ctx, laptop.Loc.Bucket, laptop.archiveKey("ci2", "-home-dev-app", id, m.ArchiveSHA256), data[:len(data)/2])
	side, _ := marshalManifest(m)
	laptop.Client.PutBytes(ctx, laptop.Loc.Bucket, laptop.manifestKey("ci2", "-home-dev-app", id), side)
	l, err = laptop.List(ctx)
	if err != nil || len(l.Archives) != 2 || len(l.Incomplete) != 2 {
		t.Fatalf("with two incomplete archives: %d listed, incomplete %v, %v", len(l.Archives), l.Incomplete, err)
	}

	// An archive changed in the bucket after its upload: its download
	// fails, nothing of it is kept.
	laptop.Client.PutBytes(ctx, laptop.Loc.Bucket, l.Archives[1].Key, append(data[:len(data)-1], data[len(data)-1]^1))
	dir := t.TempDir()
	if err := laptop.Fetch(ctx, l.Archives[1], filepath.Join(dir, "x.tar.zst")); !errors.Is(err, archive.ErrCorrupt) {
		t.Errorf("a changed archive downloaded: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed download left %v", left)
	}

	// Remove: the manifest first, then the archive; gone from the listing.
	if err := laptop.Remove(ctx, "laptop", "-home-dev-app", id); err != nil {
		t.Fatal(err)
	}
	l, _ = laptop.List(ctx)
	for _, a := range l.Archives {
		if a.Machine == "laptop" {
			t.Error("removed, still listed")
		}
	}
}

// TestUploadUndo: an upload taken back leaves the bucket as it was
// before it: the manifest it replaced back, with the archive it names;
// a kept archive untouched; an archive object that was there before (no
// manifest named it) still there; nothing when there was nothing.
func TestUploadUndo(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	bucket := tg.Loc.Bucket
	const id = "0b6c1c2e-1111-2222-3333-444455556666"
	objects := func() map[string]string {
		out := map[string]string{}
		prefix := tg.Loc.Prefix + "/"
		tg.Client.List(ctx, bucket, prefix, func(i objstore.Info) error {
			data, err := tg.Client.GetBytes(ctx, bucket, i.Key, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			out[i.Key] = string(data)
			return nil
		})
		return out
	}
	same := func(what string, want map[string]string) {
		t.Helper()
		got := objects()
		if len(got) != len(want) {
			t.Errorf("%s: %d objects, want %d", what, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s lost or changed", what, k)
			}
		}
	}

	// Nothing there: nothing left.
	file, m := packed(t, id, "hello")
	up, err := tg.Upload(ctx, file, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Undo(ctx, up); err != nil {
		t.Fatal(err)
	}
	same("nothing before", map[string]string{})

	// The same files there: kept, and left as they are.
	up, _ = tg.Upload(ctx, file, m)
	tg.Commit(ctx, up)
	before := objects()
	file2, m2 := packed(t, id, "hello")
	if up, err = tg.Upload(ctx, file2, m2); err != nil || !up.Kept {
		t.Fatalf("the same files again: %+v, %v", up, err)
	}
	tg.Undo(ctx, up)
	same("kept", before)

	// Other files: the earlier manifest back, its archive still there.
	file3, m3 := packed(t, id, "hello, changed")
	if up, err = tg.Upload(ctx, file3, m3); err != nil || up.Kept {
		t.Fatalf("other files: %+v, %v", up, err)
	}
	tg.Undo(ctx, up)
	same("replaced", before)
	l, err := tg.List(ctx)
	if err != nil || len(l.Archives) != 1 || l.Archives[0].Manifest.ArchiveSHA256 != m.ArchiveSHA256 {
		t.Fatalf("after the undo: %+v, %v", l, err)
	}

	// An object of the new archive there already, no manifest naming it
	// (an upload stopped before its commit): it stays.
	stale := tg.archiveKey("laptop", "-home-dev-app", id, m3.ArchiveSHA256)
	data, _ := os.ReadFile(file3)
	tg.Client.PutBytes(ctx, bucket, stale, data)
	before = objects()
	up, _ = tg.Upload(ctx, file3, m3)
	tg.Undo(ctx, up)
	same("an object there before", before)
}

func TestMachineName(t *testing.T) {
	for in, want := range map[string]string{"dev-box.local": "dev-box.local", "my laptop/2": "my-laptop-2", "..": "unknown-host", "büro": "b--ro"} {
		if got := MachineName(in); got != want {
			t.Errorf("MachineName(%q) = %q, want %q", in, got, want)
		}
	}
	if h, _ := os.Hostname(); h != "" && MachineName("") == "" || strings.Contains(MachineName(""), "/") {
		t.Errorf("the host name: %q", MachineName(""))
	}
}

// TestForeignManifest: a manifest in a session's place that describes
// another session (or gives no SHA-256 an archive name can carry) names
// no archive of that session: an upload replaces it, and neither its
// commit nor a listing nor a removal of unfinished uploads acts on what it
// names, which may be another session's only archive.
func TestForeignManifest(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	bucket := tg.Loc.Bucket
	const (
		mine  = "33333333-0000-4000-8000-000000000001"
		other = "33333333-0000-4000-8000-000000000002"
	)
	fo, mo := packed(t, other, "the other session")
	upo, err := tg.Upload(ctx, fo, mo)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := tg.archiveKey("laptop", mo.Folder, other, mo.ArchiveSHA256)
	there := func(what string) {
		t.Helper()
		if _, err := tg.Client.Head(ctx, bucket, otherKey); err != nil {
			t.Fatalf("%s: the other session's archive is gone: %v", what, err)
		}
	}
	// In this session's place, the other session's manifest.
	side, _ := marshalManifest(mo)
	if err := tg.Client.PutBytes(ctx, bucket, tg.manifestKey("laptop", mo.Folder, mine), side); err != nil {
		t.Fatal(err)
	}
	l, err := tg.List(ctx)
	if err != nil || len(l.Archives) != 1 || l.Archives[0].Manifest.Session != other {
		t.Fatalf("listing with a foreign manifest: %+v, %v", l, err)
	}
	// A stopped upload of this session beside it: not taken on the
	// foreign manifest's word either (the session's manifest is damaged).
	fm0, mm0 := packed(t, mine, "mine, stopped")
	stopped(t, tg, fm0, mm0)
	fm, mm := packed(t, mine, "mine")
	stopped(t, tg, fm, mm)
	if got, err := tg.Orphans(ctx, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("orphans under a foreign manifest: %+v, %v", got, err)
	}
	tg.Client.Delete(ctx, bucket, tg.archiveKey("laptop", mm.Folder, mine, mm.ArchiveSHA256))

	// This session archived: its manifest replaces the foreign one, and
	// the commit leaves the other session's archive.
	up, err := tg.Upload(ctx, fm, mm)
	if err != nil || up.Kept {
		t.Fatalf("upload over a foreign manifest: %+v, %v", up, err)
	}
	if err := tg.Commit(ctx, up); err != nil {
		t.Fatal(err)
	}
	there("after the commit")
	l, err = tg.List(ctx)
	if err != nil || len(l.Archives) != 2 {
		t.Fatalf("listing after the upload: %+v, %v", l, err)
	}
	tg.Commit(ctx, upo)

	// A manifest whose hash is not one: nothing named, nothing removed.
	bad := *mm
	bad.ArchiveSHA256 = "/../../../../.."
	side, _ = marshalManifest(&bad)
	tg.Client.PutBytes(ctx, bucket, tg.manifestKey("laptop", mm.Folder, mine), side)
	fm2, mm2 := packed(t, mine, "mine, later")
	up, err = tg.Upload(ctx, fm2, mm2)
	if err != nil || up.Kept {
		t.Fatalf("upload over a manifest with no hash: %+v, %v", up, err)
	}
	if up.prevKey != "" {
		t.Errorf("a manifest with no SHA-256 names %s", up.prevKey)
	}
	tg.Commit(ctx, up)
	there("after a manifest with no hash")
}

// TestOddNames: objects whose machine, folder or session is not one plain
// path element (a backslash, which is a separator on Windows, a hidden
// name) are not of this layout, whatever their manifest says: no listing
// shows them, so nothing downloads them to a path built from those names,
// and the removal of unfinished uploads leaves them, as objects ccm did
// not write.
func TestOddNames(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	bucket := tg.Loc.Bucket
	const id = "55555555-0000-4000-8000-000000000001"
	file, m := packed(t, id, "odd")
	sum, _ := hex.DecodeString(m.ArchiveSHA256)
	put := func(machine, folder, name string, mm *archive.Manifest) {
		t.Helper()
		if err := tg.Client.PutFile(ctx, bucket, tg.Loc.Key(machine, folder, name+"."+shortSum(m.ArchiveSHA256)+archive.Ext), file, m.ArchiveBytes, sum); err != nil {
			t.Fatal(err)
		}
		if mm != nil {
			side, _ := marshalManifest(mm)
			if err := tg.Client.PutBytes(ctx, bucket, tg.Loc.Key(machine, folder, name+archive.ManifestExt), side); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct{ machine, folder, id string }{
		{"laptop", `x\y`, id},
		{`a\b`, m.Folder, id},
		{"laptop", m.Folder, `sub\` + id},
	} {
		mm := *m
		mm.Folder, mm.Session = c.folder, c.id
		put(c.machine, c.folder, c.id, &mm)
	}
	l, err := tg.List(ctx)
	if err != nil || len(l.Archives) != 0 {
		t.Errorf("odd names listed: %+v, %v", l, err)
	}
	// An archive object of no session (".<sha>.tar.zst", no manifest), old
	// enough: not an unfinished upload of ccm's.
	put("laptop", m.Folder, "", nil)
	if got, err := tg.Orphans(ctx, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("objects of odd names taken for orphans: %+v, %v", got, err)
	}
}

// TestUploadOverNewerManifest: a session whose manifest in the bucket a
// newer ccm wrote is not archived over: the upload is refused, saying
// which manifest, and the bucket keeps what it had (the newer manifest,
// its archive), nothing added.
func TestUploadOverNewerManifest(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	bucket := tg.Loc.Bucket
	const id = "77777777-0000-4000-8000-000000000001"
	f0, m0 := packed(t, id, "from a newer ccm")
	akey := stopped(t, tg, f0, m0)
	newer := *m0
	newer.Format = "ccm-archive/9"
	side, _ := marshalManifest(&newer)
	mkey := tg.manifestKey("laptop", m0.Folder, id)
	if err := tg.Client.PutBytes(ctx, bucket, mkey, side); err != nil {
		t.Fatal(err)
	}
	file, m := packed(t, id, "here")
	_, err := tg.Upload(ctx, file, m)
	if !errors.Is(err, archive.ErrNewer) || !strings.Contains(err.Error(), tg.url(mkey)) {
		t.Fatalf("upload over a newer manifest: %v; want it refused, naming %s", err, tg.url(mkey))
	}
	n := 0
	tg.Client.List(ctx, bucket, tg.Loc.Prefix+"/", func(i objstore.Info) error {
		n++
		if i.Key != akey && i.Key != mkey {
			t.Errorf("the refused upload left %s", i.Key)
		}
		return nil
	})
	if data, err := tg.Client.GetBytes(ctx, bucket, mkey, 1<<20); err != nil || string(data) != string(side) || n != 2 {
		t.Errorf("the newer manifest after the refusal: %v (%d objects)", err, n)
	}
}
