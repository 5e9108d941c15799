package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ccm/ccm"
)

// storeEnv points ccm at a temp Claude dir and store, never ~/.claude.
func storeEnv(t *testing.T) (claude, cache string) {
	t.Helper()
	claude = filepath.Join(t.TempDir(), "claude")
	if err := os.Mkdir(claude, 0o700); err != nil {
		t.Fatal(err)
	}
	cache = ccm.DefaultRoot(claude)
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	t.Setenv("CCM_CACHE_DIR", cache)
	t.Setenv("CCM_COMPRESSION", "")
	return claude, cache
}

// runCCM runs the command tree in-process and returns the exit code.
func runCCM(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"ccm"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestStoreExitCodes pins the exit status of the store commands: 0 ok,
// 1 findings (only hard pins over the limit, unreadable metadata in a
// listing), 2 errors and bad input, 4 locked.
func TestStoreExitCodes(t *testing.T) {
	_, cache := storeEnv(t)
	in := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(in, []byte(strings.Repeat("exit code test\n", 100)), 0o600)

	if code, _, _ := runCCM("", "cache", "stats"); code != 2 {
		t.Errorf("stats on a missing store: exit %d, want 2", code)
	}
	code, out, _ := runCCM("", "cache", "put", "--pin", "hard", in)
	if code != 0 {
		t.Fatalf("put: exit %d", code)
	}
	key := strings.TrimSpace(out)
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"cache", "get", key}, 0},
		{[]string{"cache", "get", "../../settings"}, 2},
		{[]string{"cache", "get", "sha256:" + strings.Repeat("1", 64)}, 2},
		{[]string{"prune", "--max-size-mb", "-1"}, 2},
		{[]string{"prune", "--max-size-mb", "x"}, 2},
		{[]string{"prune", "--max-size-mb", "100"}, 0},
		{[]string{"prune", "--max-size-mb", "0"}, 1}, // only a hard pin remains over the limit
		{[]string{"pins"}, 0},
	} {
		if code, _, errs := runCCM("", c.args...); code != c.want {
			t.Errorf("ccm %s: exit %d, want %d (%s)", strings.Join(c.args, " "), code, c.want, errs)
		}
	}

	// A held store: prune gives up after --lock-wait with exit 4.
	st, _ := ccm.Open(cache)
	release, err := st.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCCM("", "prune", "--max-size-mb", "1", "--lock-wait", "100ms")
	release()
	if code != 4 || !strings.Contains(errs, "ccm: store locked by another ccm process") || strings.Count(errs, "\n") != 1 {
		t.Errorf("locked prune: exit %d, stderr %q", code, errs)
	}

	// Unreadable metadata: listings still list the rest and exit 1.
	runCCM("other content", "cache", "put")
	k, _ := ccm.ParseKey(key)
	os.WriteFile(filepath.Join(cache, "meta", k.Hex()+".json"), []byte("{"), 0o600)
	if code, out, errs := runCCM("", "cache", "ls"); code != 1 || strings.Count(out, "\n") != 1 || !strings.Contains(errs, "invalid metadata") {
		t.Errorf("ls with bad metadata: exit %d\n%s%s", code, out, errs)
	}
}

// TestStoreSeparateProcesses runs writers and prunes as separate ccm
// processes at once, as hooks, purges and cron do. Content a writer's
// "ccm cache put" returned a key for must read back with "ccm cache get",
// although every prune wants the old, unreferenced copies gone.
func TestStoreSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	claude, cache := storeEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	ccmBin := filepath.Join(bin, "ccm") // testscript.Main runs ccm when invoked by that name
	if err := os.Symlink(exe, ccmBin); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(claude, "projects", "p"), 0o700)
	os.WriteFile(filepath.Join(claude, "projects", "p", "s.jsonl"), []byte("{}\n"), 0o600)

	dir := t.TempDir()
	const files = 12
	for i := 0; i < files; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("text\n", 300+i))), 0o600)
	}
	// Half the content was stored two hours ago and nothing references it.
	old, _ := ccm.Open(cache)
	old.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	for i := 0; i < files/2; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
		if _, err := old.Put(context.Background(), b, ccm.Source{}, ccm.PinNone, ""); err != nil {
			t.Fatal(err)
		}
	}
	ccmCmd := func(args ...string) (string, string, error) {
		cmd := exec.Command(ccmBin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	var wg sync.WaitGroup
	errc := make(chan error, 32)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 6; i++ {
				f := filepath.Join(dir, fmt.Sprint((w*5+i)%files))
				key, errs, err := ccmCmd("cache", "put", f)
				if err != nil {
					errc <- fmt.Errorf("put %s: %v: %s", f, err, errs)
					return
				}
				got, errs, err := ccmCmd("cache", "get", strings.TrimSpace(key))
				want, _ := os.ReadFile(f)
				if err != nil || got != string(want) {
					errc <- fmt.Errorf("writer %d: %s unreadable right after put: %v %s", w, strings.TrimSpace(key), err, errs)
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	prunes := 0
	var pw sync.WaitGroup
	pw.Add(1)
	go func() {
		defer pw.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			out, errs, err := ccmCmd("prune", "--gc-unreferenced", "--max-age-days", "0.02")
			if err != nil {
				errc <- fmt.Errorf("prune: %v: %s%s", err, out, errs)
				return
			}
			prunes++
		}
	}()
	wg.Wait()
	close(stop)
	pw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if prunes == 0 {
		t.Error("no prune ran")
	}
	st, _ := ccm.Open(cache)
	l, err := st.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.MetaErr != nil || e.Orphan() || e.MetaMissing {
			t.Errorf("%s inconsistent after the run", e.Key)
		}
		if err := st.Verify(e.Key); err != nil {
			t.Error(err)
		}
	}
	if len(l.Temps) > 0 {
		t.Errorf("temp files left: %v", l.Temps)
	}
}
