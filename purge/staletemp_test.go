package purge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStaleTemps: a purge killed before its rename leaves its temp file
// beside the transcript. The next real purge, holding the transcript's
// lock, removes exactly those temps; everything else that merely looks
// alike stays, and a dry run or a purge without the lock removes nothing.
func TestStaleTemps(t *testing.T) {
	data := jsonl(
		userPrompt("u1", "", "run it"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"sleep 100"}`),
		userPrompt("u2", "a1", "never mind"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	stale := []string{".s.jsonl.ccm-tmp-12345", ".s.jsonl.ccm-tmp-0"}
	kept := []string{
		".other.jsonl.ccm-tmp-123", // another transcript's temp
		".s.jsonl.ccm-tmp-abc",     // not digits
		".s.jsonl.ccm-tmp-",        // no digits at all
		".s.jsonl.ccm-tmp-12x",     // digits, then more
		"s.jsonl.ccm-tmp-5",        // no leading dot
		".s.jsonl.ccm-tmp-5.jsonl", // a suffix
		"..s.jsonl.ccm-tmp-5",      // another base
	}
	setup := func(t *testing.T) (*env, string, string) {
		e := newEnv(t)
		p := e.write("s.jsonl", data)
		for _, n := range append(slices.Clone(stale), kept...) {
			e.write(n, []byte("partial\n"))
		}
		// A directory and a symlink with a temp's name are not regular
		// files: left alone, and the link's target too.
		if err := os.Mkdir(filepath.Join(e.dir, ".s.jsonl.ccm-tmp-77"), 0o700); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "target")
		if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(e.dir, ".s.jsonl.ccm-tmp-88")); err != nil {
			t.Fatal(err)
		}
		return e, p, target
	}
	names := func(t *testing.T, dir string) []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, de := range ents {
			out = append(out, de.Name())
		}
		return out
	}
	others := append(slices.Clone(kept), ".s.jsonl.ccm-tmp-77", ".s.jsonl.ccm-tmp-88")

	t.Run("purge", func(t *testing.T) {
		e, p, target := setup(t)
		o := e.opts()
		o.Backup = BackupNone
		rep, _ := e.purge(p, o)
		if !rep.Changed {
			t.Fatal("the orphan tool_use was not repaired")
		}
		if rep.StaleTemps != len(stale) {
			t.Errorf("StaleTemps = %d, want %d", rep.StaleTemps, len(stale))
		}
		got := names(t, e.dir)
		for _, n := range stale {
			if slices.Contains(got, n) {
				t.Errorf("%s is still there", n)
			}
		}
		for _, n := range others {
			if !slices.Contains(got, n) {
				t.Errorf("%s was removed", n)
			}
		}
		if b := readFile(t, target); string(b) != "keep me\n" {
			t.Errorf("the symlink's target changed: %q", b)
		}
		// Nothing the purge made of its own is left either.
		want := append([]string{"s.jsonl"}, others...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("directory holds %q, want %q", got, want)
		}
	})

	t.Run("restore", func(t *testing.T) {
		e, p, _ := setup(t)
		o := e.opts()
		o.Backup = BackupNone
		if _, err := restoreFile(context.Background(), p, o); err != nil {
			t.Fatal(err)
		}
		got := names(t, e.dir)
		want := append([]string{"s.jsonl"}, others...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("after restore the directory holds %q, want %q", got, want)
		}
	})

	t.Run("unchanged file", func(t *testing.T) {
		e, p, _ := setup(t)
		o := e.opts()
		o.Backup = BackupNone
		e.purge(p, o)
		rep, _ := e.purge(p, o) // nothing left to purge
		if rep.Changed {
			t.Fatal("the second purge changed the file")
		}
		for _, n := range stale {
			e.write(n, []byte("partial\n"))
		}
		rep, _ = e.purge(p, o)
		if rep.Changed || rep.StaleTemps != len(stale) {
			t.Errorf("Changed = %v, StaleTemps = %d; want false, %d", rep.Changed, rep.StaleTemps, len(stale))
		}
	})

	for _, c := range []struct {
		name string
		o    func(*Options)
	}{
		{"dry run", func(o *Options) { o.DryRun = true; o.Store = nil }},
		{"no lock", func(o *Options) { o.LockDir = "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, p, _ := setup(t)
			before := names(t, e.dir)
			o := e.opts()
			o.Backup = BackupNone
			c.o(&o)
			rep, _ := e.purge(p, o)
			if rep.StaleTemps != 0 {
				t.Errorf("StaleTemps = %d, want 0", rep.StaleTemps)
			}
			if got := names(t, e.dir); !slices.Equal(got, before) {
				t.Errorf("directory holds %q, want %q", got, before)
			}
		})
	}
}
