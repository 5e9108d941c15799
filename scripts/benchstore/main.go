// Command benchstore prepares and measures CCM store workloads for
// scripts/bench-store.sh. It is a benchmark tool, not part of ccm.
//
//	benchstore gen-store -dir DIR -n 100000   lay out N blobs quickly (no fsync)
//	benchstore gen-packs -dir DIR -n 100000   store N blobs in packs, 1,000 a batch (as 100 purges)
//	benchstore single -dir DIR -n 50 -size 1MB  a durable Put (blob file) vs a one-blob batch (pack), median
//	benchstore put -dir DIR -size 1GB [-workers 2]  store tool-output text through the API
//	benchstore text -size 1GB > FILE          write tool-output text
//	benchstore fanout -dir DIR                move blobs and metadata into two-hex-digit folders
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchstore gen-store|put|text [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "store directory")
	n := fs.Int("n", 100000, "blobs to lay out")
	size := fs.String("size", "1GB", "bytes of text (KB, MB, GB)")
	workers := fs.Int("workers", 2, "goroutines calling Put")
	batch := fs.Bool("batch", false, "put through a Batch and Commit once")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	fs.Parse(os.Args[2:])
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	var err error
	switch os.Args[1] {
	case "gen-store":
		err = genStore(*dir, *n)
	case "gen-packs":
		err = genPacks(*dir, *n)
	case "single":
		err = single(*dir, *n, parseSize(*size))
	case "put":
		err = put(*dir, parseSize(*size), *workers, *batch)
	case "text":
		err = writeText(os.Stdout, parseSize(*size))
	case "fanout":
		err = fanout(*dir)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "benchstore:", err)
		os.Exit(1)
	}
}

func parseSize(s string) int64 {
	mult := int64(1)
	for suf, m := range map[string]int64{"KB": 1e3, "MB": 1e6, "GB": 1e9} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchstore: bad size", s)
		os.Exit(2)
	}
	return int64(f * float64(mult))
}

// outputSize draws a tool-output size from the mix of claude-context-manager's
// reference file, restricted to what purge stores (over ~5 KB): 75 % 5–50
// KB, 22.5 % 50–300 KB, 2.5 % 0.3–2 MB.
func outputSize(r *rand.Rand) int {
	switch p := r.Float64(); {
	case p < 0.75:
		return 5000 + r.IntN(45000)
	case p < 0.975:
		return 50000 + r.IntN(250000)
	default:
		return 300000 + r.IntN(1700000)
	}
}

var words = strings.Fields(`error warning info debug ok failed passed test build main func return
struct package import src internal cmd go mod sum vendor handler request response status code line file
path value key config user session tool result output input the a of to in and for with on`)

// text fills b with log- and listing-like lines.
func text(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.Grow(n + 200)
	for line := 0; b.Len() < n; line++ {
		fmt.Fprintf(&b, "%s:%d: ", []string{"src/main.go", "internal/store/put.go", "cmd/ccm/app.go", "README.md"}[r.IntN(4)], r.IntN(2000))
		for w := 3 + r.IntN(12); w > 0; w-- {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%08x\n", r.Uint32())
	}
	return b.Bytes()[:n]
}

func writeText(w io.Writer, total int64) error {
	r := rand.New(rand.NewPCG(42, 1))
	for written := int64(0); written < total; {
		b := text(r, outputSize(r))
		if _, err := w.Write(b); err != nil {
			return err
		}
		written += int64(len(b))
	}
	return nil
}

// genStore lays out n blobs the way the store writes them, without fsync:
// zstd blobs with metadata, random access times over 90 days, 10 % soft
// and 2 % hard pins. Only the layout matters to what is measured.
func genStore(dir string, n int) error {
	for _, d := range []string{"blobs", "meta"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	enc, _ := zstd.NewWriter(nil)
	now := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				content := text(r, 2000+r.IntN(20000))
				content = append(content, fmt.Sprintf("blob %d\n", i)...)
				k := ccm.KeyOf(content)
				blob := enc.EncodeAll(content, nil)
				at := now.Add(-time.Duration(r.Float64() * 90 * 24 * float64(time.Hour)))
				m := &ccm.Meta{Key: k, CreatedAt: at, LastAccessAt: at, BytesUncompressed: int64(len(content)),
					BytesCompressed: int64(len(blob)), Lines: int64(bytes.Count(content, []byte{'\n'})), Compression: "zstd",
					Source: ccm.Source{ToolName: "Bash", Command: "go test ./...", SessionPath: "/home/u/.claude/projects/p/s.jsonl"}}
				switch p := r.Float64(); {
				case p < 0.02:
					m.Pinned = ccm.PinInfo{Level: ccm.PinHard, Reason: "bench", PinnedAt: at}
				case p < 0.12:
					m.Pinned = ccm.PinInfo{Level: ccm.PinSoft, Reason: "bench", PinnedAt: at}
				}
				raw, err := m.MarshalJSON()
				if err != nil {
					errs <- err
					return
				}
				var js bytes.Buffer
				json.Indent(&js, raw, "", "  ")
				js.WriteByte('\n')
				if err := os.WriteFile(filepath.Join(dir, "blobs", k.Hex()+".zst"), blob, 0o600); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(dir, "meta", k.Hex()+".json"), js.Bytes(), 0o600); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// genPacks stores n blobs through the store's API in batches of 1,000 (one
// pack each, as 100 purges of 1,000 outputs would), with the mix of
// genStore: 2-22 KB of text, access times over 90 days, 10 % soft and 2 %
// hard pins.
func genPacks(dir string, n int) error {
	st, err := ccm.Open(dir)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 7))
	now := time.Now()
	var at time.Time
	st.Now = func() time.Time { return at }
	ctx := context.Background()
	src := ccm.Source{ToolName: "Bash", Command: "go test ./...", SessionPath: "/home/u/.claude/projects/p/s.jsonl"}
	for i := 0; i < n; {
		b := st.NewBatch()
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			content := text(r, 2000+r.IntN(20000))
			content = append(content, fmt.Sprintf("blob %d\n", i)...)
			at = now.Add(-time.Duration(r.Float64() * 90 * 24 * float64(time.Hour)))
			pin := ccm.PinNone
			switch p := r.Float64(); {
			case p < 0.02:
				pin = ccm.PinHard
			case p < 0.12:
				pin = ccm.PinSoft
			}
			if _, err := b.Put(ctx, content, src, pin, "bench"); err != nil {
				return err
			}
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// single times n durable stores of new content of size bytes, alternating
// a Store.Put (blob file + metadata file, what the capture hook does) and a
// one-blob Batch committed at once (a one-blob pack), and prints the
// medians: the measure behind keeping Store.Put on blob files.
func single(dir string, n int, size int64) error {
	st, err := ccm.Open(dir)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(3, 9))
	ctx := context.Background()
	var files, packs []time.Duration
	for i := 0; i < n; i++ {
		for _, asPack := range []bool{false, true} {
			content := text(r, int(size))
			start := time.Now()
			if asPack {
				b := st.NewBatch()
				if _, err := b.Put(ctx, content, ccm.Source{ToolName: "Bash"}, ccm.PinNone, ""); err != nil {
					return err
				}
				if err := b.Commit(); err != nil {
					return err
				}
				packs = append(packs, time.Since(start))
			} else {
				if _, err := st.Put(ctx, content, ccm.Source{ToolName: "Bash"}, ccm.PinNone, ""); err != nil {
					return err
				}
				files = append(files, time.Since(start))
			}
		}
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	fmt.Printf("%d stores of %d bytes: Store.Put (blob file) median %v, one-blob batch (pack) median %v\n",
		n, size, med(files).Round(10*time.Microsecond), med(packs).Round(10*time.Microsecond))
	return nil
}

// put stores total bytes of tool-output text through the store API from
// several goroutines, as purge does, and prints the throughput.
func put(dir string, total int64, workers int, batch bool) error {
	st, err := ccm.Open(dir)
	if err != nil {
		return err
	}
	// Generate first, so that only storing is timed.
	r := rand.New(rand.NewPCG(42, 2))
	var outs [][]byte
	for sum := int64(0); sum < total; {
		b := text(r, outputSize(r))
		outs = append(outs, b)
		sum += int64(len(b))
	}
	var next atomic.Int64
	var stored atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	var b *ccm.Batch
	if batch {
		b = st.NewBatch()
	}
	cpu0 := cpuTime()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(outs) {
					return
				}
				putf := st.Put
				if b != nil {
					putf = b.Put
				}
				if _, err := putf(context.Background(), outs[i], ccm.Source{ToolName: "Bash"}, ccm.PinNone, ""); err != nil {
					errc <- err
					return
				}
				stored.Add(int64(len(outs[i])))
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	mode := "durable Put each"
	if b != nil {
		c := time.Now()
		if err := b.Commit(); err != nil {
			return err
		}
		mode = fmt.Sprintf("one Batch, its Commit %.2f s", time.Since(c).Seconds())
	}
	d := time.Since(start)
	cpu := cpuTime() - cpu0
	mb := float64(stored.Load()) / 1e6
	fmt.Printf("%d outputs, %.1f MB in %.2f s: %.0f MB/s; %.2f s CPU, %.0f MB per CPU second (%s, %d goroutines, avg %.0f KB)\n",
		len(outs), mb, d.Seconds(), mb/d.Seconds(), cpu.Seconds(), mb/cpu.Seconds(), mode, workers, mb*1e3/float64(len(outs)))
	return nil
}

// fanout moves a flat store into the two-character fan-out layout
// (blobs/ab/abcd….zst), to compare reading both layouts at scale.
func fanout(dir string) error {
	for _, sub := range []string{"blobs", "meta"} {
		d := filepath.Join(dir, sub)
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || len(name) < 3 || strings.HasPrefix(name, ".") {
				continue
			}
			fan := filepath.Join(d, name[:2])
			if err := os.MkdirAll(fan, 0o700); err != nil {
				return err
			}
			if err := os.Rename(filepath.Join(d, name), filepath.Join(fan, name)); err != nil {
				return err
			}
		}
	}
	return nil
}
