package purge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/purge/restore"
)

// roundTrip purges path with thinking and progress kept, restores it and
// wants the original bytes back.
func (e *env) roundTrip(path string) {
	e.t.Helper()
	orig := readFile(e.t, path)
	o := e.opts()
	o.KeepThinking, o.KeepProgress = true, true
	o.RecentTurns = 0
	o.Threshold = 1000
	rep, purged := e.purge(path, o)
	if rep.Stubs == 0 {
		e.t.Fatalf("%s: nothing stubbed, the round trip proves nothing", filepath.Base(path))
	}
	if bytes.Equal(orig, purged) {
		e.t.Fatalf("%s: purge changed nothing", filepath.Base(path))
	}
	rr, err := restoreFile(context.Background(), path, o)
	if err != nil {
		e.t.Fatal(err)
	}
	if rr.Restored != rep.Stubs || len(rr.Missing) != 0 {
		e.t.Errorf("%s: restored %d of %d stubs, %d missing", filepath.Base(path), rr.Restored, rep.Stubs, len(rr.Missing))
	}
	got := readFile(e.t, path)
	if !bytes.Equal(got, orig) {
		e.t.Errorf("%s: restore did not give back the original (%d vs %d bytes)", filepath.Base(path), len(got), len(orig))
		reportFirstDiff(e.t, orig, got)
	}
	if rr.BytesAfter != int64(len(orig)) {
		e.t.Errorf("restore report: %d bytes after, file has %d", rr.BytesAfter, len(orig))
	}
}

func TestRestoreRoundTripSynth(t *testing.T) {
	for _, o := range []synth.Options{
		{Seed: 81, Turns: 20, Thinking: true, Images: true, Pins: true, Compactions: 1, Sidechains: true, Rewinds: 1},
		{Seed: 82, Turns: 20, Progress: true, Version: "2.1.39", Images: true},
	} {
		in, _ := gen(t, o)
		e := newEnv(t)
		e.roundTrip(e.write("s.jsonl", in))
	}
	// Hand-written: every kind of stub (images, inputs, arrays, copies).
	e := newEnv(t)
	e.roundTrip(e.write("h.jsonl", stubFixture()))
}

func TestRestoreRoundTripCorpus(t *testing.T) {
	root := testutil.CopyCorpus(t)
	for _, rel := range []string{testutil.Spotter, testutil.SpotterAgent, testutil.Demo, testutil.FlatAgent} {
		e := newEnv(t)
		path := filepath.Join(root, rel)
		// The spotter session's thinking carries placeholder signatures,
		// which the API rejects and every purge removes (a repair, not
		// undone by a restore): given real-looking ones, the round trip
		// is about the stubs alone.
		data := bytes.ReplaceAll(readFile(t, path), []byte(`"signature":"[REDACTED_SIGNATURE]"`), []byte(`"signature":"`+sig+`"`))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		e.roundTrip(path)
	}
}

// TestRestoreBackup: restore --backup brings back the original byte for
// byte, and keeps the purged file as a backup in turn.
func TestRestoreBackup(t *testing.T) {
	for _, mode := range []BackupMode{BackupLink, BackupCopy, BackupZstd} {
		t.Run(string(mode), func(t *testing.T) {
			in, _ := gen(t, synth.Options{Seed: 83, Turns: 12, Thinking: true, Progress: true, Defects: synth.AllDefects})
			e := newEnv(t)
			p := e.write("s.jsonl", in)
			o := e.opts()
			o.Backup = mode
			rep, purged := e.purge(p, o)
			if rep.Backup == "" {
				t.Fatal("no backup")
			}
			if mode != BackupZstd && !bytes.Equal(readFile(t, rep.Backup), in) {
				t.Error("the backup is not the original")
			}
			rr, err := restoreBackup(context.Background(), p, "", o)
			if err != nil {
				t.Fatal(err)
			}
			if rr.From != rep.Backup {
				t.Errorf("restored from %s, want the newest backup %s", rr.From, rep.Backup)
			}
			if got := readFile(t, p); !bytes.Equal(got, in) {
				t.Errorf("restore --backup: %d bytes, original %d", len(got), len(in))
			}
			if rr.Backup == "" || !bytes.Equal(readFile(t, rr.Backup), purged) && mode != BackupZstd {
				t.Errorf("the purged file was not kept (%q)", rr.Backup)
			}
		})
	}
}

// TestRestoreMissingBlob: a stub whose blob is gone is reported and stays;
// the others are restored.
func TestRestoreMissingBlob(t *testing.T) {
	e := newEnv(t)
	in := stubFixture()
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.KeepThinking = true
	rep, purged := e.purge(p, o)
	// Delete the blob of the first stub.
	var victim ccm.Key
	for _, l := range splitLines(purged) {
		if sts := stubsIn(l); len(sts) > 0 {
			victim = sts[0].Key
			break
		}
	}
	removeBlob(t, e.root, victim)
	rr, err := restoreFile(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	// The first stub is Bash's output, whose stdout copy in the same
	// record has the same bytes: both stubs name the lost blob.
	if len(rr.Missing) != 2 {
		t.Errorf("missing = %+v, want the 2 stubs of %s", rr.Missing, victim)
	}
	for _, m := range rr.Missing {
		if m.Key != victim {
			t.Errorf("missing %s, want only %s", m.Key, victim)
		}
	}
	if rr.Restored != rep.Stubs-2 {
		t.Errorf("restored %d, want %d", rr.Restored, rep.Stubs-2)
	}
	got := readFile(t, p)
	if !bytes.Contains(got, []byte(string(victim))) {
		t.Error("the stub of the missing blob is gone")
	}
	mustCheck(t, got, false)
	// A corrupt blob is not restored either.
	e2 := newEnv(t)
	p2 := e2.write("s.jsonl", in)
	o2 := e2.opts()
	e2.purge(p2, o2)
	corruptFirstBlob(t, e2.root)
	rr, err = restoreFile(context.Background(), p2, o2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Missing) != 1 {
		t.Errorf("corrupt blob: missing = %+v", rr.Missing)
	}
}

// TestRestoreForeignStubs: stubs ccm did not write (claude-context-manager's, a
// hook's) hold the output as plain text, not as a raw JSON value. Restore
// must never splice such a blob in as JSON (an output that happens to be
// JSON would turn a tool_result's content into an object, which the API
// rejects), and a stub it leaves in place must be reported, not counted
// as done.
func TestRestoreForeignStubs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	put := func(text string, source string) string {
		key, err := e.store.Put(ctx, []byte(text), ccm.Source{ToolName: "Bash"}, ccm.PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		return stub.Stub{Key: key, Source: source, Bytes: int64(len(text)), Pinned: ccm.PinNone}.String()
	}
	jsonOut := put(`{"status":"ok","items":[1,2,3]}`, "Bash curl http://api")
	textOut := put("total 0\ndrwx------ 2 u u 40 .\n", "Bash ls -la")
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"curl http://api"}`),
		toolResult("r1", "a1", "t1", js(jsonOut)),
		assistantToolUse("a2", "r1", "m2", "t2", "Bash", `{"command":"ls -la"}`),
		toolResult("r2", "a2", "t2", js(textOut)),
		assistantText("a3", "r2", "m3", "ok"),
	)
	p := e.write("s.jsonl", in)
	rr, err := restoreFile(ctx, p, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	out := readFile(t, p)
	for _, u := range []string{"r1", "r2"} {
		c := gjson.GetBytes(lineOf(out, u), "message.content.0.content")
		if c.Type != gjson.String && !c.IsArray() {
			t.Errorf("%s: tool_result content became %s", u, c.Raw)
		}
	}
	left := 0
	for _, l := range splitLines(out) {
		left += len(stubsIn(l))
	}
	if left != len(rr.Missing) {
		t.Errorf("%d stubs left in the file, %d reported (restored %d)", left, len(rr.Missing), rr.Restored)
	}
}

// TestBackupsNewestFirst: restore --backup takes the newest backup, also
// when several were made within one millisecond (a counter is added) and
// when they are compressed.
func TestBackupsNewestFirst(t *testing.T) {
	for _, mode := range []BackupMode{BackupLink, BackupZstd} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.Backup = mode
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
			o.Now = func() time.Time { return now }
			versions := [][]byte{thinkingFixture(), stubFixture(), pinFixture()}
			p := e.write("s.jsonl", versions[0])
			var made []string
			for i, v := range versions {
				if i > 0 {
					os.WriteFile(p, v, 0o600)
				}
				rep, _ := e.purge(p, o)
				made = append(made, rep.Backup)
			}
			bs, err := restore.Backups(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 3 || bs[0] != made[2] {
				t.Errorf("backups newest first: %v; made in order %v", bs, made)
			}
			if _, err := restoreBackup(context.Background(), p, "", o); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, p), versions[2]) {
				t.Error("restore --backup did not bring back the newest version")
			}
		})
	}
}

// removeBlob deletes key from the store at root as prune does.
func removeBlob(t *testing.T, root string, key ccm.Key) {
	t.Helper()
	st, err := ccm.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockExclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := st.Remove(key); err != nil {
		t.Fatal(err)
	}
	if err := st.SyncDirs(); err != nil {
		t.Fatal(err)
	}
}

// corruptFirstBlob overwrites the stored bytes of the store's first blob
// (by key) with garbage of the same length: its frame in a pack, or its
// file.
func corruptFirstBlob(t *testing.T, root string) {
	t.Helper()
	st, err := ccm.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.List(context.Background(), nil)
	if err != nil || len(l.Entries) == 0 {
		t.Fatalf("no blobs (%v)", err)
	}
	f := l.Entries[0].Files[0]
	fh, err := os.OpenFile(f.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(bytes.Repeat([]byte{'#'}, int(f.Size)), f.Offset); err != nil {
		t.Fatal(err)
	}
}
