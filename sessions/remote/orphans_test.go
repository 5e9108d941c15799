package remote

import (
	"context"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"ccm/internal/objstore"
	"ccm/sessions/archive"
)

// Orphans: a stopped upload (an archive, no manifest) and an archive
// superseded but not removed are taken once old enough; the archive a
// manifest names, a session with one archive object and its manifest,
// another machine's objects and a session whose manifest cannot be read
// are kept.
func TestOrphans(t *testing.T) {
	ctx := context.Background()
	laptop, _ := target(t, "laptop")
	desktop := *laptop
	desktop.Machine = "desktop"
	bucket := laptop.Loc.Bucket
	put := func(tg *Target, key, file, sha string) {
		t.Helper()
		fi, _ := os.Stat(file)
		sum, _ := hex.DecodeString(sha)
		if err := tg.Client.PutFile(ctx, bucket, key, file, fi.Size(), sum); err != nil {
			t.Fatal(err)
		}
	}
	const (
		stopped    = "11111111-0000-4000-8000-000000000001"
		superseded = "11111111-0000-4000-8000-000000000002"
		single     = "11111111-0000-4000-8000-000000000003"
		unreadable = "11111111-0000-4000-8000-000000000004"
	)
	// A stopped upload: the archive object alone, on both machines.
	f1, m1 := packed(t, stopped, "one")
	stoppedKey := laptop.archiveKey("laptop", m1.Folder, stopped, m1.ArchiveSHA256)
	put(laptop, stoppedKey, f1, m1.ArchiveSHA256)
	put(&desktop, desktop.archiveKey("desktop", m1.Folder, stopped, m1.ArchiveSHA256), f1, m1.ArchiveSHA256)
	// Superseded: two uploads, the first one's object left.
	f2, m2 := packed(t, superseded, "two")
	if _, err := laptop.Upload(ctx, f2, m2); err != nil {
		t.Fatal(err)
	}
	f2b, m2b := packed(t, superseded, "two, later")
	if _, err := laptop.Upload(ctx, f2b, m2b); err != nil {
		t.Fatal(err)
	}
	oldKey := laptop.archiveKey("laptop", m2.Folder, superseded, m2.ArchiveSHA256)
	// One archive and its manifest.
	f3, m3 := packed(t, single, "three")
	if _, err := laptop.Upload(ctx, f3, m3); err != nil {
		t.Fatal(err)
	}
	// Two archive objects and a manifest that does not parse.
	f4, m4 := packed(t, unreadable, "four")
	put(laptop, laptop.archiveKey("laptop", m4.Folder, unreadable, m4.ArchiveSHA256), f4, m4.ArchiveSHA256)
	f4b, m4b := packed(t, unreadable, "four, later")
	put(laptop, laptop.archiveKey("laptop", m4.Folder, unreadable, m4b.ArchiveSHA256), f4b, m4b.ArchiveSHA256)
	if err := laptop.Client.PutBytes(ctx, bucket, laptop.manifestKey("laptop", m4.Folder, unreadable), []byte("{not json")); err != nil {
		t.Fatal(err)
	}

	// Written just now: none is old enough.
	if got, err := laptop.Orphans(ctx, time.Now().Add(-OrphanAge)); err != nil || len(got) != 0 {
		t.Fatalf("fresh objects taken for orphans: %v, %v", got, err)
	}
	got, err := laptop.Orphans(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != stoppedKey && got[1].Key != stoppedKey || got[0].Key != oldKey && got[1].Key != oldKey {
		t.Fatalf("orphans %+v, want %s and %s", got, stoppedKey, oldKey)
	}
	if done, err := laptop.RemoveOrphans(ctx, got); err != nil || len(done) != 2 {
		t.Fatalf("removed %v, %v", done, err)
	}
	l, err := laptop.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range l.Archives {
		ids = append(ids, a.Manifest.Session)
	}
	if len(l.Archives) != 2 || len(l.Incomplete) != 3 { // the desktop's stopped upload, the unreadable session's two
		t.Errorf("after removing the orphans: archives %v, incomplete %v", ids, l.Incomplete)
	}
}

// ListKnown takes what its caller knows of a session's one archive object
// instead of reading its manifest, reads the manifest of a session with
// two (an upload stopped, or under way) and of one it does not know, and
// Complete reads a known one's manifest and refuses it once it names
// another archive.
func TestListKnown(t *testing.T) {
	ctx := context.Background()
	laptop, _ := target(t, "laptop")
	const (
		one = "22222222-0000-4000-8000-000000000001"
		two = "22222222-0000-4000-8000-000000000002"
	)
	f1, m1 := packed(t, one, "one")
	up1, err := laptop.Upload(ctx, f1, m1)
	if err != nil {
		t.Fatal(err)
	}
	f2, m2 := packed(t, two, "two")
	up2, err := laptop.Upload(ctx, f2, m2)
	if err != nil {
		t.Fatal(err)
	}
	// A stopped upload of the second session: a second archive object.
	f2b, m2b := packed(t, two, "two, later")
	sum, _ := hex.DecodeString(m2b.ArchiveSHA256)
	if err := laptop.Client.PutFile(ctx, laptop.Loc.Bucket, laptop.archiveKey("laptop", m2b.Folder, two, m2b.ArchiveSHA256), f2b, m2b.ArchiveBytes, sum); err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	known := func(url string, size int64) (*archive.Manifest, bool) {
		asked[url] = true
		if url == up1.URL && size == m1.ArchiveBytes {
			return &archive.Manifest{Session: one, Folder: m1.Folder, Project: "as known", ArchiveBytes: size}, true
		}
		return nil, false
	}
	l, err := laptop.ListKnown(ctx, known)
	if err != nil || len(l.Archives) != 2 {
		t.Fatalf("listed %+v, %v", l, err)
	}
	for _, a := range l.Archives {
		switch a.Manifest.Session {
		case one:
			if !a.Lite || a.Manifest.Project != "as known" {
				t.Errorf("the known archive's manifest was read: %+v", a)
			}
			if err := laptop.Complete(ctx, &a); err != nil || a.Lite || a.Manifest.ArchiveSHA256 != m1.ArchiveSHA256 {
				t.Errorf("complete: %+v, %v", a.Manifest, err)
			}
		case two:
			if a.Lite || a.URL != up2.URL || asked[up2.URL] {
				t.Errorf("a session with two archive objects was taken as known: %+v (asked %v)", a, asked)
			}
		}
	}
	// The first session archived again: a listing from before is
	// refused by Complete.
	stale := l.Archives[0]
	if stale.Manifest.Session != one {
		stale = l.Archives[1]
	}
	stale.Lite = true
	f1b, m1b := packed(t, one, "one, later")
	up, err := laptop.Upload(ctx, f1b, m1b)
	if err != nil {
		t.Fatal(err)
	}
	laptop.Commit(ctx, up)
	if err := laptop.Complete(ctx, &stale); err == nil {
		t.Error("Complete took a manifest that names another archive now")
	}
}

// A session whose manifest names an archive object that is not there (its
// archive lost, or a manifest from elsewhere) keeps the objects it has,
// however many: no listing shows them, and one of them may be the
// session's only copy.
func TestOrphansManifestNamesMissing(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	const id = "44444444-0000-4000-8000-000000000001"
	for _, body := range []string{"one", "two"} {
		f, m := packed(t, id, body)
		stopped(t, tg, f, m)
	}
	_, m3 := packed(t, id, "three")
	side, _ := marshalManifest(m3)
	if err := tg.Client.PutBytes(ctx, tg.Loc.Bucket, tg.manifestKey("laptop", m3.Folder, id), side); err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Orphans(ctx, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("orphans of a session whose manifest names a missing archive: %+v, %v", got, err)
	}
}

// RemoveOrphans looks at each object again just before it goes: the
// listing may be seconds old, and not every writer of the machine's prefix
// holds the run's lock (a second config dir has a ccm home and a lock of
// its own, an export takes none). A stopped upload that another run has
// since sent again and committed stays, and so does an object written
// again since it was listed; one unchanged goes.
func TestRemoveOrphansLooksAgain(t *testing.T) {
	ctx := context.Background()
	tg, _ := target(t, "laptop")
	bucket := tg.Loc.Bucket
	const (
		resent = "66666666-0000-4000-8000-000000000001"
		stale  = "66666666-0000-4000-8000-000000000002"
	)
	f1, m1 := packed(t, resent, "one")
	k1 := stopped(t, tg, f1, m1)
	f2, m2 := packed(t, stale, "two")
	k2 := stopped(t, tg, f2, m2)
	orphans, err := tg.Orphans(ctx, time.Now().Add(time.Hour))
	if err != nil || len(orphans) != 2 {
		t.Fatalf("orphans %+v, %v", orphans, err)
	}
	// Meanwhile another run archives the first session: the same archive,
	// sent again under the same name, then its manifest.
	if up, err := tg.Upload(ctx, f1, m1); err != nil || up.Kept {
		t.Fatalf("upload: %+v, %v", up, err)
	}
	done, err := tg.RemoveOrphans(ctx, orphans)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Client.Head(ctx, bucket, k1); err != nil {
		t.Fatalf("the archive a manifest names since it was listed was removed: %v", err)
	}
	if l, err := tg.List(ctx); err != nil || len(l.Archives) != 1 || l.Archives[0].Key != k1 {
		t.Errorf("listing after the removal: %+v, %v", l, err)
	}
	if len(done) != 1 || done[0].Key != k2 {
		t.Errorf("removed %+v, want %s alone", done, k2)
	}

	// An object written again since it was listed (as an upload of the
	// same archive sends it before its manifest): kept.
	stopped(t, tg, f2, m2)
	orphans, _ = tg.Orphans(ctx, time.Now().Add(time.Hour))
	if len(orphans) != 1 {
		t.Fatalf("orphans %+v", orphans)
	}
	listed := orphans[0]
	listed.LastModified = listed.LastModified.Add(-time.Hour)
	if done, err := tg.RemoveOrphans(ctx, []objstore.Info{listed}); err != nil || len(done) != 0 {
		t.Errorf("an object written since it was listed: removed %+v, %v", done, err)
	}
	if done, err := tg.RemoveOrphans(ctx, orphans); err != nil || len(done) != 1 {
		t.Errorf("an unchanged orphan: removed %+v, %v", done, err)
	}
	if _, err := tg.Client.Head(ctx, bucket, k2); !objstore.IsNotFound(err) {
		t.Errorf("the unchanged orphan is still there: %v", err)
	}
}

// stopped puts a packed archive's object alone under tg's machine, as an
// upload stopped before its manifest leaves it, and returns its key.
func stopped(t *testing.T, tg *Target, file string, m *archive.Manifest) string {
	t.Helper()
	key := tg.archiveKey(tg.Machine, m.Folder, m.Session, m.ArchiveSHA256)
	sum, _ := hex.DecodeString(m.ArchiveSHA256)
	if err := tg.Client.PutFile(context.Background(), tg.Loc.Bucket, key, file, m.ArchiveBytes, sum); err != nil {
		t.Fatal(err)
	}
	return key
}

// The listing cache: a second listing reads no manifest of the archives
// the first one saw and shows the same; an archive replaced is read again,
// and the one it replaced leaves the cache.
func TestCache(t *testing.T) {
	ctx := context.Background()
	laptop, _ := target(t, "laptop")
	dir := t.TempDir()
	const one, two = "33333333-0000-4000-8000-000000000001", "33333333-0000-4000-8000-000000000002"
	f1, m1 := packed(t, one, "one")
	f2, m2 := packed(t, two, "two")
	for _, x := range []struct {
		f string
		m *archive.Manifest
	}{{f1, m1}, {f2, m2}} {
		if _, err := laptop.Upload(ctx, x.f, x.m); err != nil {
			t.Fatal(err)
		}
	}
	c := OpenCache(dir, laptop)
	first, err := laptop.ListKnown(ctx, c.Known)
	if err != nil || len(first.Archives) != 2 || first.Archives[0].Lite {
		t.Fatalf("first listing: %+v, %v", first, err)
	}
	if err := c.Save(first); err != nil {
		t.Fatal(err)
	}
	c = OpenCache(dir, laptop)
	second, err := laptop.ListKnown(ctx, c.Known)
	if err != nil || len(second.Archives) != 2 {
		t.Fatalf("second listing: %+v, %v", second, err)
	}
	for i, a := range second.Archives {
		b := first.Archives[i]
		if !a.Lite || a.URL != b.URL || a.Manifest.Project != b.Manifest.Project || !a.Manifest.Created.Equal(b.Manifest.Created) ||
			a.Manifest.Records != b.Manifest.Records || len(a.Manifest.Files) != len(b.Manifest.Files) || a.Manifest.Files[0].Size != b.Manifest.Files[0].Size {
			t.Errorf("from the cache %+v, listed %+v", a.Manifest, b.Manifest)
		}
	}
	// The first session archived again: its new archive is read, the old
	// one leaves the cache.
	f1b, m1b := packed(t, one, "one, later")
	up, err := laptop.Upload(ctx, f1b, m1b)
	if err != nil {
		t.Fatal(err)
	}
	laptop.Commit(ctx, up)
	third, err := laptop.ListKnown(ctx, c.Known)
	if err != nil || len(third.Archives) != 2 {
		t.Fatalf("third listing: %+v, %v", third, err)
	}
	for _, a := range third.Archives {
		if a.Manifest.Session == one && (a.Lite || a.URL != up.URL) {
			t.Errorf("the new archive was taken from the cache: %+v", a)
		}
	}
	c.Save(third)
	if _, ok := OpenCache(dir, laptop).Known(first.Archives[0].URL, first.Archives[0].Size); ok && first.Archives[0].Manifest.Session == one {
		t.Error("the replaced archive stayed in the cache")
	}
	if fi, err := os.Stat(c.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file: %v, %v", fi, err)
	}
}

// An archive of the same files that carries less stored content than the
// one being uploaded is not kept in its place: the upload goes up and
// replaces it (the originals go after, and the content with them).
func TestUploadCarriesMore(t *testing.T) {
	ctx := context.Background()
	laptop, _ := target(t, "laptop")
	const id = "44444444-0000-4000-8000-000000000001"
	f1, m1 := packed(t, id, "same")
	m1.Missing = []string{"cafe"}
	if _, err := laptop.Upload(ctx, f1, m1); err != nil {
		t.Fatal(err)
	}
	// The same files again, carrying nothing more: kept.
	f2, m2 := packed(t, id, "same")
	if up, err := laptop.Upload(ctx, f2, m2); err != nil || !up.Kept {
		t.Fatalf("the same files, the same content: kept %v, %v", up != nil && up.Kept, err)
	}
	// Now carrying the stub's content the first one lacked: sent.
	f3, m3 := packed(t, id, "same")
	m3.Content = []archive.Content{{Key: "cafe", Size: 4}}
	up, err := laptop.Upload(ctx, f3, m3)
	if err != nil || up.Kept {
		t.Fatalf("the same files with more content: kept %v, %v", up != nil && up.Kept, err)
	}
	laptop.Commit(ctx, up)
	l, err := laptop.List(ctx)
	if err != nil || len(l.Archives) != 1 || len(l.Archives[0].Manifest.Content) != 1 {
		t.Errorf("listed after: %+v, %v", l, err)
	}
}
