package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
)

// packedStore stores n distinct outputs in one batch (one pack), as a purge
// does, and returns their keys and contents.
func packedStore(t *testing.T, cache string, seed, n int, at time.Time) ([]ccm.Key, map[ccm.Key]string) {
	t.Helper()
	st, err := ccm.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return at }
	b := st.NewBatch()
	var ks []ccm.Key
	contents := map[ccm.Key]string{}
	for i := range n {
		c := fmt.Sprintf("output %d-%d\n%s", seed, i, strings.Repeat(fmt.Sprintf("%d: some tool output line %d\n", seed, i*7), 100+i*10))
		k, err := b.Put(context.Background(), []byte(c), ccm.Source{ToolName: "Bash"}, ccm.PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
		contents[k] = c
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return ks, contents
}

// frameOf returns where key's frame is.
func frameOf(t *testing.T, cache string, k ccm.Key) ccm.BlobFile {
	t.Helper()
	st, _ := ccm.Open(cache)
	l, err := st.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.Key == k {
			return e.Files[0]
		}
	}
	t.Fatalf("%s not listed", k)
	return ccm.BlobFile{}
}

func appendIndex(t *testing.T, cache, line string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(cache, "packs", "index.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(line + "\n")
}

// TestStorePackDamage: a frame that fails its checksum, an index line whose
// frame holds other content (the hash fails), an index line pointing past
// its pack's end and a truncated pack: verify names each damaged blob on
// one line and exits 1; get of each fails with one line and exit 2 and
// writes nothing; every other blob still reads.
func TestStorePackDamage(t *testing.T) {
	_, cache := storeEnv(t)
	a, contents := packedStore(t, cache, 1, 8, time.Now())
	b, more := packedStore(t, cache, 2, 4, time.Now())
	for k, v := range more {
		contents[k] = v
	}
	// a[0]: one byte of its frame changed.
	f := frameOf(t, cache, a[0])
	pf, _ := os.OpenFile(f.Path, os.O_RDWR, 0)
	one := make([]byte, 1)
	pf.ReadAt(one, f.Offset+f.Size/2)
	pf.WriteAt([]byte{one[0] ^ 0x20}, f.Offset+f.Size/2)
	pf.Close()
	// a[1]: the index now places it on a[2]'s frame (CRC good, hash bad).
	f2 := frameOf(t, cache, a[2])
	appendIndex(t, cache, fmt.Sprintf(`{"op":"put","key":"%s","t":1,"pack":"%s","off":%d,"len":%d,"codec":"%s","crc":%d,"size":10,"lines":1}`,
		a[1], strings.TrimSuffix(filepath.Base(f2.Path), ".pack"), f2.Offset, f2.Size, f2.Compression, f2.CRC))
	// a[3]: an index line pointing past the pack's end.
	f3 := frameOf(t, cache, a[3])
	appendIndex(t, cache, fmt.Sprintf(`{"op":"put","key":"%s","t":1,"pack":"%s","off":%d,"len":%d,"codec":"%s","crc":%d,"size":10,"lines":1}`,
		a[3], strings.TrimSuffix(filepath.Base(f3.Path), ".pack"), 1<<30, f3.Size, f3.Compression, f3.CRC))
	// b: its pack truncated in the middle of its last frame.
	fb := frameOf(t, cache, b[3])
	os.Truncate(fb.Path, fb.Offset+fb.Size/2)

	damaged := []ccm.Key{a[0], a[1], a[3], b[3]}
	code, out, errs := runCCM("", "cache", "verify")
	if code != 1 {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(damaged)+1 || !strings.HasPrefix(lines[len(lines)-1], "verified 12 blobs") {
		t.Fatalf("verify output:\n%s", out)
	}
	wantWhy := map[ccm.Key]string{a[0]: "frame fails its checksum", a[1]: "content does not match its key",
		a[3]: "past the pack's end", b[3]: "past the pack's end"}
	for _, k := range damaged {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "damaged  "+string(k)+"  ") {
				n++
				if !strings.Contains(l, wantWhy[k]) {
					t.Errorf("%s: %q, want %q", k, l, wantWhy[k])
				}
			}
		}
		if n != 1 {
			t.Errorf("%s named %d times:\n%s", k, n, out)
		}
	}
	for k, want := range contents {
		code, out, errs := runCCM("", "cache", "get", string(k))
		isDamaged := false
		for _, d := range damaged {
			isDamaged = isDamaged || d == k
		}
		if isDamaged {
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ccm: "+string(k)) {
				t.Errorf("get damaged %s: exit %d, stdout %d bytes, stderr %q", k, code, len(out), errs)
			}
			continue
		}
		if code != 0 || out != want {
			t.Errorf("get %s: exit %d (%s)", k, code, errs)
		}
	}
}

// TestStoreRepackKilled: a prune process killed (SIGKILL) at each step of
// its repack loses nothing: verify is clean, every kept blob reads, every
// deleted one is gone, and the next prune finishes the repack (both small
// packs merged into one).
func TestStoreRepackKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	ccmBin := filepath.Join(bin, "ccm")
	if err := os.Symlink(exe, ccmBin); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"copied", "indexed", "removing"} {
		t.Run(step, func(t *testing.T) {
			claude, cache := storeEnv(t)
			old := time.Now().Add(-3 * time.Hour) // past gc's grace period
			a, contents := packedStore(t, cache, 1, 10, old)
			b, more := packedStore(t, cache, 2, 10, old)
			for k, v := range more {
				contents[k] = v
			}
			// Transcripts reference a[:2] and all of b: gc deletes a[2:],
			// so pack a is rewritten and pack b kept.
			var refs []string
			for _, k := range append(append([]ccm.Key{}, a[:2]...), b...) {
				refs = append(refs, `{"message":{"content":"[CCM_CACHED] key: `+string(k)+`"}}`)
			}
			os.MkdirAll(filepath.Join(claude, "projects", "p"), 0o700)
			os.WriteFile(filepath.Join(claude, "projects", "p", "s.jsonl"), []byte(strings.Join(refs, "\n")+"\n"), 0o600)
			cmd := exec.Command(ccmBin, "prune", "--gc-unreferenced")
			cmd.Env = append(os.Environ(), "CCM_TEST_REPACK_KILL="+step)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.String() != "signal: killed" {
				t.Fatalf("prune not killed: %v\n%s", err, out)
			}
			check := func() {
				if code, out, errs := runCCM("", "cache", "verify"); code != 0 || !strings.HasPrefix(out, "verified 12 blobs") {
					t.Fatalf("verify after kill at %s: exit %d\n%s%s", step, code, out, errs)
				}
				for k, want := range contents {
					code, got, errs := runCCM("", "cache", "get", string(k))
					gone := false
					for _, d := range a[2:] {
						gone = gone || d == k
					}
					if gone && code != 2 || !gone && (code != 0 || got != want) {
						t.Fatalf("get %s after kill at %s: exit %d %s", k, step, code, errs)
					}
				}
			}
			check()
			if code, out, errs := runCCM("", "prune", "--gc-unreferenced"); code != 0 {
				t.Fatalf("second prune: exit %d\n%s%s", code, out, errs)
			}
			check()
			if code, out, _ := runCCM("", "--json", "cache", "stats"); code != 0 || !strings.Contains(out, `"packs": 1`) || !strings.Contains(out, `"pack_bytes_unused": 0`) {
				t.Fatalf("stats after the second prune:\n%s", out)
			}
		})
	}
}
