package restore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript/rewrite"
)

// fixture is a store, a lock folder and a transcript folder under one
// temp dir, and restore options for them.
func fixture(t *testing.T) (Options, string) {
	t.Helper()
	base := t.TempDir()
	st, err := ccm.Open(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "projects", "-tmp-proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Store = st
	o.LockDir = filepath.Join(base, "locks")
	return o, dir
}

// TestFileSplicesRawValuesBack: a stub whose blob is a raw JSON value (as
// a purge stores it) goes back byte for byte, an array as well as a
// string with escapes; the lines around it stay as they were, the file
// keeps its mode, and a link backup holds the stubbed file.
func TestFileSplicesRawValuesBack(t *testing.T) {
	o, dir := fixture(t)
	ctx := context.Background()
	head := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"list it"}}`
	tail := `{"type":"assistant","uuid":"a2","parentUuid":"r1","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"ok é ✓"}]}}`
	values := []string{
		`"total 3\n\"quoted\" \\ back\tslash \u00e9 ✓` + strings.Repeat(`\ndrwx------ file`, 300) + `"`,
		`[{"type":"text","text":"` + strings.Repeat("x", 4000) + `"}]`,
	}
	var orig, stubbed []string
	orig = append(orig, head)
	stubbed = append(stubbed, head)
	for i, v := range values {
		key, err := o.Store.Put(ctx, []byte(v), ccm.Source{Type: stub.RawValueType, ToolName: "Bash"}, ccm.PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		s := stub.Stub{Key: key, Source: "Bash ls", Bytes: int64(len(v))}.String()
		line := `{"type":"user","uuid":"r` + string(rune('1'+i)) + `","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":%s}]}}`
		orig = append(orig, strings.Replace(line, "%s", v, 1))
		stubbed = append(stubbed, strings.Replace(line, "%s", string(rawjson.Append(nil, s)), 1))
	}
	orig = append(orig, tail)
	stubbed = append(stubbed, tail)
	p := filepath.Join(dir, "s.jsonl")
	in := []byte(strings.Join(stubbed, "\n") + "\n")
	if err := os.WriteFile(p, in, 0o640); err != nil {
		t.Fatal(err)
	}
	dry := o
	dry.DryRun = true
	if rep, err := File(ctx, p, dry); err != nil || !rep.Changed || rep.Restored != 2 {
		t.Fatalf("dry run: %v, %+v", err, rep)
	}
	rep, err := File(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed {
		t.Error("the report says the file was not changed")
	}
	got, _ := os.ReadFile(p)
	if want := strings.Join(orig, "\n") + "\n"; string(got) != want {
		t.Fatalf("restored file differs:\n%.300s\nwant\n%.300s", got, want)
	}
	if rep.Restored != 2 || rep.ByValue != 0 || len(rep.Missing) != 0 || rep.BytesAfter != int64(len(got)) {
		t.Errorf("report %+v", rep)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %04o, want 0640", fi.Mode().Perm())
	}
	if b, err := rewrite.ReadBackup(rep.Backup); err != nil || !bytes.Equal(b, in) {
		t.Errorf("backup %s: %v, holds the stubbed file: %v", rep.Backup, err, bytes.Equal(b, in))
	}
	if !IsRestoreBackup(rep.Backup) {
		t.Errorf("backup %s does not carry the restore tag", rep.Backup)
	}
}

// TestFileMissingBlob: a stub whose blob is not in the store is reported
// and left in place; nothing else changes, and the report says the file
// was not changed (no backup made).
func TestFileMissingBlob(t *testing.T) {
	o, dir := fixture(t)
	key := ccm.Key("sha256:" + strings.Repeat("ab", 32))
	s := stub.Stub{Key: key, Source: "Bash ls", Bytes: 10}.String()
	in := []byte(`{"type":"user","uuid":"r1","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":` + string(rawjson.Append(nil, s)) + `}]}}` + "\n")
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := File(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, in) {
		t.Errorf("file changed:\n%s", got)
	}
	if rep.Restored != 0 || len(rep.Missing) != 1 || rep.Missing[0].Key != key || rep.Missing[0].Line != 1 || rep.Changed || rep.Backup != "" {
		t.Errorf("report %+v", rep)
	}
}

// TestFromBackupNewest: without --from the newest purge backup comes
// back, not a restore's own, with a counter and .zst ordered right; the
// file being replaced is backed up first.
func TestFromBackupNewest(t *testing.T) {
	o, dir := fixture(t)
	p := filepath.Join(dir, "s.jsonl")
	stamp := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local).Format(rewrite.BackupStamp)
	files := map[string]string{
		p:                              "current\n",
		p + ".backup." + stamp:         "oldest\n",
		p + ".backup." + stamp + "-1":  "older\n",
		p + ".backup." + stamp + "-10": "newest purge backup\n",
		p + ".backup." + stamp + "-11" + rewrite.RestoreTag: "a restore's backup\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bs, err := Backups(p)
	if err != nil || len(bs) != 4 || !strings.HasSuffix(bs[0], "-11"+rewrite.RestoreTag) || !strings.HasSuffix(bs[1], "-10") {
		t.Fatalf("Backups = %v, %v", bs, err)
	}
	o.Now = func() time.Time { return time.Date(2026, 3, 2, 12, 0, 0, 0, time.Local) }
	rep, err := FromBackup(context.Background(), p, "", o)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "newest purge backup\n" {
		t.Errorf("restored %q", got)
	}
	if b, err := rewrite.ReadBackup(rep.Backup); err != nil || string(b) != "current\n" {
		t.Errorf("the replaced file's backup %s: %q, %v", rep.Backup, b, err)
	}
}
