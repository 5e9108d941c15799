package remote

import (
	"context"
	"encoding/hex"
	"os"
	"testing"
	"time"
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
