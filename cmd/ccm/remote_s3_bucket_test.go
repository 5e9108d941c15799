package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/objstore/s3test"
)

// TestS3SessionsListingCache: ccm sessions --archived --from shows the
// same from its listing cache as from the manifests, and what changed in
// the bucket since.
func TestS3SessionsListingCache(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(2, 0)
	a.ok("archive", "--older-than", "1d", "--to", url)
	b := newS3Env(t, srv, "desktop")
	cold := b.ok("--json", "sessions", "--archived", "--from", url)
	if _, err := os.Stat(filepath.Join(b.home, "cache", "s3")); err != nil {
		t.Fatalf("no listing cache: %v", err)
	}
	if warm := b.ok("--json", "sessions", "--archived", "--from", url); warm != cold {
		t.Errorf("from the cache:\n%s\nfrom the manifests:\n%s", warm, cold)
	}
	// A third session archived: listed, with the two from the cache.
	a.sessions(1, 0)
	a.ok("archive", "--older-than", "1d", "--to", url)
	var listed struct {
		Sessions []struct {
			ID string `json:"session"`
		} `json:"sessions"`
	}
	json.Unmarshal([]byte(b.ok("--json", "sessions", "--archived", "--from", url)), &listed)
	if len(listed.Sessions) != 3 {
		t.Errorf("after a third archive: %+v", listed.Sessions)
	}
}

// TestS3UnfinishedUploadKept: an archive object no manifest names, of
// this machine, is an upload that may still be going on until it is a day
// old (remote.Orphans, tested with older objects in sessions/remote): an
// archive run leaves it and says nothing of it.
func TestS3UnfinishedUploadKept(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(1, 0)
	tg := a.target(t)
	key := tg.Loc.Key("laptop", a.folder, newSessionID()+".0123456789abcdef.tar.zst")
	if err := tg.Client.PutBytes(context.Background(), tg.Loc.Bucket, key, []byte("an upload under way")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"archive", "-n", "-v", "--older-than", "1d", "--to", url}, {"archive", "--older-than", "1d", "--to", url}} {
		if out := a.ok(args...); strings.Contains(out, "unfinished") {
			t.Errorf("%v: %s", args, out)
		}
	}
	if _, err := tg.Client.Head(context.Background(), tg.Loc.Bucket, key); err != nil {
		t.Errorf("a fresh unfinished upload was removed: %v", err)
	}
}
