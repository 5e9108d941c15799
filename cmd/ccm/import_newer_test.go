package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/fsutil"
	"ccm/internal/objstore/s3test"
	"ccm/sessions/archive"
	"ccm/sessions/bundle"
)

// newerBundle writes a copy of the bundle at good as a newer ccm would
// make it: of kind "bundle", its record (and the part's declaration in
// the manifest) in format ccm-bundle/9; of kind "archive", its manifest
// in format ccm-archive/9. The manifest is edited as JSON, whatever
// fields this ccm knows; it is returned with the file.
func newerBundle(t *testing.T, good, kind string) (string, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "newer-"+kind+archive.Ext)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	note := archive.PartPath(bundle.PartKind, bundle.PartName)
	var noteSum string
	var noteSize int
	var m map[string]any
	rewriteArchive(t, p, func(h *tar.Header, data []byte) []byte {
		switch {
		case kind == "bundle" && h.Name == note:
			data = bytes.Replace(data, []byte(`"ccm-bundle/1"`), []byte(`"ccm-bundle/9"`), 1)
			sum := sha256.Sum256(data)
			noteSum, noteSize = hex.EncodeToString(sum[:]), len(data)
		case h.Name == archive.ManifestName:
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if kind == "archive" {
				m["format"] = "ccm-archive/9"
			}
			parts, _ := m["parts"].([]any)
			for _, pt := range parts {
				if pt := pt.(map[string]any); kind == "bundle" && pt["path"] == note {
					pt["sha256"], pt["size"], pt["format"] = noteSum, noteSize, "ccm-bundle/9"
				}
			}
			data, _ = json.Marshal(m)
		}
		return data
	})
	return p, m
}

// TestImportNewerFormatWritesNothing: a bundle of a newer format (its
// archive format, or its own record's) is refused with one line naming
// the format it has and what this ccm reads, before anything is written:
// the config dir, the store and its reference index (all under the config
// dir here) are what they were, byte for byte.
func TestImportNewerFormatWritesNothing(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a")
	_, id := generatedSession(t, a, 11, 300_000)
	_, other := generatedSession(t, a, 12, 200_000)
	ccmOK(t, "purge", "--all")
	good := filepath.Join(t.TempDir(), "s"+archive.Ext)
	ccmOK(t, "export", "--session", id, "-o", good)
	earlier := filepath.Join(t.TempDir(), "o"+archive.Ext)
	ccmOK(t, "export", "--session", other, "-o", earlier)

	// Machine B has its own sessions and store, and imported one before.
	b := filepath.Join(t.TempDir(), "b")
	generatedSession(t, b, 13, 300_000)
	ccmOK(t, "purge", "--all")
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ccmOK(t, "import", earlier, "--cwd", root)
	for _, c := range []struct{ kind, want string }{
		{"bundle", "a ccm-bundle/9 bundle, which this ccm does not read (it reads " + bundle.NoteFormat + "): update ccm"},
		{"archive", "archive format ccm-archive/9 is newer than this ccm reads (" + archive.Format + "): update ccm"},
	} {
		crafted, _ := newerBundle(t, good, c.kind)
		before := readTree(t, b)
		code, out, errs := runCCM("", "import", crafted, "--cwd", root)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.kind, code, out, errs, c.want)
		}
		sameTree(t, c.kind+": the refused import", b, before)
	}
}

// TestS3ImportNewerFormatWritesNothing: the same through object storage:
// import s3:// of a newer ccm's bundle, or of its archive, is refused with
// the format it has before anything is downloaded or written.
func TestS3ImportNewerFormatWritesNothing(t *testing.T) {
	srv := s3test.Need(t)
	srv.Prefix += "-newer"
	ctx := context.Background()
	a := newS3Env(t, srv, "laptop")
	a.sessions(2, 0)
	id := a.ids[1] // not the content of b's session (both are generated alike)
	good := filepath.Join(t.TempDir(), "s"+archive.Ext)
	a.ok("export", "--session", id, "-o", good)
	b := newS3Env(t, srv, "desktop")
	b.sessions(1, 0)
	store := filepath.Join(filepath.Dir(b.cfg), "store")
	dest, _ := filepath.EvalSymlinks(t.TempDir())
	for _, c := range []struct{ kind, want string }{
		{"bundle", "a ccm-bundle/9 bundle, which this ccm does not read (it reads " + bundle.NoteFormat + "): update ccm"},
		{"archive", "archive format ccm-archive/9 is newer than this ccm reads (" + archive.Format + "): update ccm"},
	} {
		// A newer ccm's upload, as remote.Upload lays it out: the
		// archive under its SHA-256, then its manifest with the archive's
		// size and SHA-256.
		crafted, m := newerBundle(t, good, c.kind)
		n, sum, err := fsutil.FileSHA256(crafted)
		if err != nil {
			t.Fatal(err)
		}
		m["archive_bytes"], m["archive_sha256"] = n, sum
		side, _ := json.Marshal(m)
		tg := a.target(t)
		machine := "newer-" + c.kind
		folder := m["folder"].(string)
		raw, _ := hex.DecodeString(sum)
		if err := tg.Client.PutFile(ctx, tg.Loc.Bucket, tg.Loc.Key(machine, folder, id+"."+sum[:16]+archive.Ext), crafted, n, raw); err != nil {
			t.Fatal(err)
		}
		if err := tg.Client.PutBytes(ctx, tg.Loc.Bucket, tg.Loc.Key(machine, folder, id+archive.ManifestExt), side); err != nil {
			t.Fatal(err)
		}
		cfg, st := readTree(t, b.cfg), readTree(t, store)
		out, errs, code := b.run("import", srv.URL(), id, "--cwd", dest)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.kind, code, out, errs, c.want)
		}
		sameTree(t, c.kind+": the refused import, the config dir", b.cfg, cfg)
		sameTree(t, c.kind+": the refused import, the store", store, st)
		if left := filesUnder(filepath.Join(b.home, "tmp")); len(left) != 0 {
			t.Errorf("%s: the refused import left %v", c.kind, left)
		}
		tg.Client.Delete(ctx, tg.Loc.Bucket, tg.Loc.Key(machine, folder, id+archive.ManifestExt))
	}
}
