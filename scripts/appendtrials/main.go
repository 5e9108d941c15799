// Command appendtrials runs a ccm binary's purge while another process
// (this one) appends to the transcript, many times over, and counts the
// appended lines that were lost, duplicated or out of order. Every count
// must be 0. scripts/trials-append.sh runs each kind of trial.
//
//	go run ./scripts/appendtrials -ccm ./ccm -kind reopen -trials 60
//	go run ./scripts/appendtrials -ccm ./ccm -kind hold -backup zstd -portable
//
// Kinds of writer:
//
//	reopen  opens the file, writes a line and closes it, as Claude Code does,
//	        with a random pause (0-1 ms) between open and write and a random
//	        gap (0-2 ms) between lines, for the whole purge
//	timed   opens and closes the file in a loop until it holds the file the
//	        purge renamed over, then writes a line to it and the next line
//	        to the new file: the race at the rename, every trial
//	hold    opens the file once at a random moment of the purge and writes a
//	        line through that descriptor every millisecond; lines in the file
//	        the report says it kept for the writer count as kept, not lost
//	big     a 60 MB transcript and 1,000 appends, one per millisecond,
//	        reopening per line, from 5 ms before the purge until all are
//	        written (after the purge when it is quicker)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
)

type options struct {
	ccm, kind, backup string
	trials, jobs      int
	portable          bool
	size              int64
	keep              bool
}

func main() {
	var o options
	flag.StringVar(&o.ccm, "ccm", "", "the ccm binary to run")
	flag.StringVar(&o.kind, "kind", "reopen", "writer: reopen, timed, hold or big")
	flag.StringVar(&o.backup, "backup", "link", "purge --backup: link, copy, zstd or none")
	flag.IntVar(&o.trials, "trials", 60, "number of trials")
	flag.IntVar(&o.jobs, "jobs", 1, "trials run at once")
	flag.BoolVar(&o.portable, "portable", false, "run ccm with CCM_LIVE_DETECT=portable")
	flag.Int64Var(&o.size, "size", 0, "transcript size in bytes (default 4 MB, 60 MB for big)")
	flag.BoolVar(&o.keep, "keep", false, "keep the trials' files of a trial that lost or misordered lines")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "appendtrials:", err)
		os.Exit(1)
	}
}

// tally adds up the trials.
type tally struct {
	mu                                    sync.Mutex
	written, lost, misordered, duplicated int
	refused, kept, renames, raced, failed int
}

func run(o options) error {
	if o.ccm == "" {
		return errors.New("-ccm is required")
	}
	if o.size == 0 {
		o.size = 4 << 20
		if o.kind == "big" {
			o.size = 60 << 20
		}
	}
	work, err := os.MkdirTemp("", "ccm-appendtrials-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	base := filepath.Join(work, "base.jsonl")
	if err := generate(base, o.size); err != nil {
		return err
	}
	var t tally
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(o.jobs, 1))
	for i := 0; i < o.trials; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := trial(o, work, base, i, &t); err != nil {
				t.mu.Lock()
				t.failed++
				t.mu.Unlock()
				fmt.Fprintf(os.Stderr, "trial %d: %v\n", i, err)
			}
		}()
	}
	wg.Wait()
	detect := "proc"
	if o.portable {
		detect = "portable"
	}
	fmt.Printf("%-6s %-8s backup=%-4s %3d trials: %6d lines written, %d lost, %d misordered, %d duplicated; %d raced the rename, %d purges refused (held open), %d kept the old file, %d renames, %d failed\n",
		o.kind, detect, o.backup, o.trials, t.written, t.lost, t.misordered, t.duplicated, t.raced, t.refused, t.kept, t.renames, t.failed)
	if t.lost+t.misordered+t.duplicated+t.failed > 0 {
		os.Exit(1)
	}
	return nil
}

// generate writes a transcript of about size bytes.
func generate(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := synth.Generate(bw, synth.Benchmark(7, size)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// line is the n-th line a trial's writer appends.
func line(n int) string {
	return fmt.Sprintf(`{"type":"ccm-trial","n":%d,"text":"appended line %d é ✓"}`+"\n", n, n)
}

// trial purges a fresh copy of base while a writer appends, then counts.
func trial(o options, work, base string, i int, t *tally) error {
	home := filepath.Join(work, fmt.Sprintf("t%d", i))
	path := filepath.Join(home, ".claude", "projects", "-p", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := copyFile(base, path); err != nil {
		return err
	}
	w := &writer{path: path, rng: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))}
	stop := make(chan struct{})
	done := make(chan error, 1)
	purgeStarted := make(chan struct{})
	go func() { done <- w.run(o.kind, stop, purgeStarted) }()
	if o.kind == "reopen" || o.kind == "big" {
		time.Sleep(5 * time.Millisecond) // a few lines before the purge
	}
	cmd := exec.Command(o.ccm, "purge", "--no-tokens", "--json", "--backup", o.backup, path)
	cmd.Env = env(home, o.portable)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	close(purgeStarted)
	perr := cmd.Wait()
	took := time.Since(start)
	time.Sleep(20 * time.Millisecond) // lines after the purge, too
	close(stop)
	if err := <-done; err != nil {
		return err
	}
	rep := gjson.Get(stdout.String(), "0")
	refused := false
	if perr != nil {
		if !strings.Contains(stderr.String(), "open for writing") {
			return fmt.Errorf("purge: %v: %s", perr, stderr.String())
		}
		refused = true
	}
	var kept []string
	for _, k := range rep.Get("kept_for_writers").Array() {
		kept = append(kept, k.Str)
	}
	if b := rep.Get("backup").Str; rep.Get("held_open_by").Exists() && !strings.HasSuffix(b, ".zst") {
		// Where the warning says a holder's lines go (older builds
		// name the backup without kept_for_writers).
		kept = append(kept, b)
	}
	got, err := readLines(path)
	if err != nil {
		return err
	}
	c := count(w.n, got, kept)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written += w.n
	t.lost += c.lost
	t.misordered += c.misordered
	t.duplicated += c.duplicated
	t.renames += int(rep.Get("swaps").Int())
	if refused {
		t.refused++
	}
	if len(kept) > 0 {
		t.kept++
	}
	if w.raced {
		t.raced++
	}
	if c.lost+c.misordered+c.duplicated > 0 {
		fmt.Fprintf(os.Stderr, "trial %d (purge %v): %d of %d lines lost, %d misordered, %d duplicated; report %s; stderr %s\n",
			i, took.Round(time.Millisecond), c.lost, w.n, c.misordered, c.duplicated, strings.TrimSpace(stdout.String()), stderr.String())
		if o.keep {
			return nil
		}
	}
	return os.RemoveAll(home)
}

func env(home string, portable bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "CLAUDECODE" || strings.HasPrefix(k, "CCM_") || k == "CLAUDE_CONFIG_DIR" || k == "HOME" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"CCM_CACHE_DIR="+filepath.Join(home, ".claude", "cache", "ccm"), "CCM_HOME="+filepath.Join(home, ".claude", "ccm"))
	if portable {
		out = append(out, "CCM_LIVE_DETECT=portable")
	}
	return out
}

// counts of one trial.
type counts struct{ lost, misordered, duplicated int }

// count compares the lines 0..n-1 a writer appended with those found in
// the transcript (got, in file order) and in the files kept for writers.
// A line is lost when it is in neither; misordered when it follows a
// line written after it in the transcript; duplicated when it is there
// twice.
func count(n int, got []int, kept []string) counts {
	var c counts
	seen := map[int]int{}
	last := -1
	for _, k := range got {
		seen[k]++
		if seen[k] > 1 {
			c.duplicated++
		}
		if k < last {
			c.misordered++
		}
		last = max(last, k)
	}
	inKept := map[int]bool{}
	for _, f := range kept {
		ks, _ := readLines(f)
		for _, k := range ks {
			inKept[k] = true
		}
	}
	for k := 0; k < n; k++ {
		if seen[k] == 0 && !inKept[k] {
			c.lost++
		}
	}
	return c
}

// readLines returns the numbers of the trial's lines in a file, in order.
func readLines(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		l, err := br.ReadBytes('\n')
		if bytes.Contains(l, []byte(`"ccm-trial"`)) {
			var v struct {
				N int `json:"n"`
			}
			if json.Unmarshal(l, &v) != nil {
				out = append(out, -1) // a torn or glued line: out of order
			} else {
				out = append(out, v.N)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
