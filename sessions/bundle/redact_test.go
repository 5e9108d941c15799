// Bundles: redaction, the roots a path is mapped from, and damaged
// content.

package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/sessions/archive"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"
)

// TestRedact: matches are replaced in the transcript, the files and the
// stored content; the stub names the redacted content's key, which the
// bundle carries; the manifest says so without the patterns.
func TestRedact(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	w := newWorld(t, root)
	ctx := context.Background()
	w.add("projects/"+w.folder+"/"+testID+"/tool-results/secret.txt", "token=sk-live-ABCDEF123456 end\n")
	// The secret in stored content too, and in a region moved into the
	// store that holds a stub of that content.
	secret := "output with sk-live-ZZZZZZ999999 inside\n" + w.content
	skey, _ := w.store.Put(ctx, []byte(secret), ccm.Source{}, ccm.PinNone, "")
	inner, _ := json.Marshal(stub.Stub{Key: skey, Source: "Bash make"}.String() + " and sk-live-RRRRRR111111")
	region := `[{"type":"text","text":` + string(inner) + `}]`
	rkey, _ := w.store.Put(ctx, []byte(region), ccm.Source{Type: stub.RawValueType}, ccm.PinSoft, "kept")
	tr := w.files["projects/"+w.folder+"/"+testID+".jsonl"]
	w.add("projects/"+w.folder+"/"+testID+".jsonl", strings.ReplaceAll(tr, string(w.key), string(rkey))+
		`{"type":"user","cwd":"`+root+`","message":{"content":"my key is sk-live-QQQQQQ000000"}}`+"\n")
	pf := filepath.Join(t.TempDir(), "redact.txt")
	os.WriteFile(pf, []byte("# live keys\nsk-live-[A-Z0-9]{12}\n"), 0o600)
	red, err := LoadRedactor(pf)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(ctx, w.source(t), Options{Store: w.store, Redact: red, Stage: t.TempDir(), Level: zstd.SpeedFastest, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(unpackAll(t, p.Archive), []byte("sk-live-")) {
		t.Error("a secret left the machine")
	}
	if _, err := os.Stat(filepath.Join(w.cfg, "projects", w.folder, testID+".jsonl")); err != nil {
		t.Fatalf("the session moved: %v", err)
	}
	cfg, st := target(t)
	plan, err := Import(ctx, p.Archive, ImportOptions{ConfigDir: cfg, Store: st, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan.Redacted, "; "); got != "1 patterns of "+pf+"; 4 matches replaced with [REDACTED]" {
		t.Errorf("the bundle says %q", got)
	}
	newSecret := ccm.KeyOf([]byte(strings.Replace(secret, "sk-live-ZZZZZZ999999", "[REDACTED]", 1)))
	innerNew, _ := json.Marshal(stub.Stub{Key: newSecret, Source: "Bash make"}.String() + " and [REDACTED]")
	newRegion := ccm.KeyOf([]byte(`[{"type":"text","text":` + string(innerNew) + `}]`))
	got, _ := os.ReadFile(filepath.Join(cfg, "projects", w.folder, testID+".jsonl"))
	if !bytes.Contains(got, []byte(string(newRegion))) || bytes.Contains(got, []byte(string(rkey))) {
		t.Errorf("the stub does not name the redacted region's key %s:\n%s", newRegion, got)
	}
	for _, k := range []ccm.Key{newRegion, newSecret} {
		if c, err := st.Get(ctx, k); err != nil || strings.Contains(string(c), "sk-live") {
			t.Errorf("%s: redacted content in the new store: %v", k, err)
		}
	}
	if meta, _ := st.Stat(newRegion); meta == nil || meta.Pinned.Level != ccm.PinSoft || meta.Source.Type != stub.RawValueType {
		t.Errorf("the region's pin and source: %+v", meta)
	}
	if len(plan.StaysStub) != 0 {
		t.Errorf("stays stub %v", plan.StaysStub)
	}

	// A pattern that hits a store key would lose a stub: refused.
	os.WriteFile(pf, []byte("[0-9a-f]{64}\n"), 0o600)
	red, _ = LoadRedactor(pf)
	if _, err := Make(ctx, w.source(t), Options{Store: w.store, Redact: red, Stage: t.TempDir(), Level: zstd.SpeedFastest, Now: time.Now()}); err == nil || !strings.Contains(err.Error(), "store key") {
		t.Errorf("a pattern over the keys: %v", err)
	}
	for _, bad := range []string{"", "# only a comment\n", "(unclosed\n", "a*\n"} {
		os.WriteFile(pf, []byte(bad), 0o600)
		if _, err := LoadRedactor(pf); err == nil {
			t.Errorf("patterns %q accepted", bad)
		}
	}
}

// unpackAll is every member's bytes, decompressed, one after another.
func unpackAll(t *testing.T, path string) []byte {
	t.Helper()
	f, _ := os.Open(path)
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	all, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func TestCheckRoot(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	os.Mkdir(filepath.Join(dir, "proj"), 0o700)
	os.Symlink(filepath.Join(dir, "proj"), filepath.Join(dir, "link"))
	t.Chdir(dir)
	if got, err := CheckRoot("proj"); err != nil || got != filepath.Join(real, "proj") {
		t.Errorf("relative: %q, %v", got, err)
	}
	if got, err := CheckRoot(filepath.Join(dir, "link")); err != nil || got != filepath.Join(real, "proj") {
		t.Errorf("symlink: %q, %v", got, err)
	}
	if _, err := CheckRoot(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such directory") {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	if _, err := CheckRoot(filepath.Join(dir, "file")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v", err)
	}
}

// TestImportDamagedContent: a bundle whose files are intact but whose
// stored content is corrupt is refused, and imports with
// AllowMissingContent: the stub stays a stub, named, the files in place.
func TestImportDamagedContent(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	w := newWorld(t, root)
	data, _ := os.ReadFile(w.export(t, nil))
	damaged := filepath.Join(t.TempDir(), "damaged.tar.zst")
	os.WriteFile(damaged, transform(t, data, func(tw *tar.Writer, h *tar.Header, body []byte) {
		if strings.HasPrefix(h.Name, archive.ContentDir) {
			body = bytes.ToUpper(body)
		}
		tw.WriteHeader(h)
		tw.Write(body)
	}), 0o600)
	cfg, st := target(t)
	o := ImportOptions{ConfigDir: cfg, Store: st, Now: time.Now()}
	if _, err := Import(context.Background(), damaged, o); !errors.Is(err, archive.ErrCorrupt) {
		t.Fatalf("damaged content: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(cfg, "projects")); len(entries) != 0 {
		t.Fatalf("a refused import wrote %v", entries)
	}
	o.AllowMissingContent = true
	p, err := Import(context.Background(), damaged, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.StaysStub, []string{string(w.key)}) || !slices.Equal(p.BadContent, []string{string(w.key)}) || p.Content != 0 {
		t.Errorf("plan: stays stub %v, bad %v, content %d", p.StaysStub, p.BadContent, p.Content)
	}
	if got, err := os.ReadFile(p.Transcript); err != nil || string(got) != w.files["projects/"+w.folder+"/"+testID+".jsonl"] {
		t.Errorf("the transcript: %v", err)
	}
	if _, err := st.Stat(w.key); err == nil {
		t.Error("the damaged content went into the store")
	}
}

// TestRedactKeepsLocation: a pattern that matches the project's path
// redacts it in the conversation but not in the records' cwd, which the
// import must find under the old path to move it to --cwd: every cwd of
// the imported session is under the new root, and the message still says
// [REDACTED] where it named the path.
func TestRedactKeepsLocation(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	w := newWorld(t, root)
	pf := filepath.Join(t.TempDir(), "redact.txt")
	os.WriteFile(pf, []byte(regexp.QuoteMeta(root)+"\n"), 0o600)
	red, err := LoadRedactor(pf)
	if err != nil {
		t.Fatal(err)
	}
	b := w.export(t, red)
	cfg, st := target(t)
	newRoot, _ := filepath.EvalSymlinks(t.TempDir())
	plan, err := Import(context.Background(), b, ImportOptions{ConfigDir: cfg, Store: st, Root: newRoot, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan.Redacted, "; "); got != "1 patterns of "+pf+"; 1 matches replaced with [REDACTED]" {
		t.Errorf("the bundle says %q", got)
	}
	if plan.Located != 3 {
		t.Errorf("%d records moved, want 3 (two of the transcript, one of the subagent)", plan.Located)
	}
	got, _ := os.ReadFile(plan.Transcript)
	sub, _ := os.ReadFile(filepath.Join(filepath.Dir(plan.Transcript), testID, "subagents", "agent-a1.jsonl"))
	for _, f := range [][]byte{got, sub} {
		for _, line := range bytes.Split(bytes.TrimSpace(f), []byte("\n")) {
			if c := gjson.GetBytes(line, "cwd"); c.Exists() && !strings.HasPrefix(c.Str, newRoot) {
				t.Errorf("a record's cwd is %q, not under %s", c.Str, newRoot)
			}
		}
	}
	if !bytes.Contains(got, []byte(`"look at [REDACTED]"`)) || bytes.Contains(got, []byte("look at "+root)) {
		t.Errorf("the path in the message is not redacted:\n%s", got)
	}
}
