// Command benchfsync measures what a durable write costs on this machine
// with each way of syncing: fsync(2) alone, and fsutil.Sync (F_FULLFSYNC
// on macOS, which also flushes the drive's cache; fsync elsewhere). Each
// round is one of ccm's durable replacements: a temp file written,
// synced, renamed over the target, and its directory synced; and a batch
// of files synced at once as fsutil.SyncFiles does. It prints the median
// and 90th percentile per write, and per batch. scripts/bench-fsync.sh
// runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"ccm/internal/fsutil"
)

func main() {
	dir := flag.String("dir", "", "folder on the disk to measure (default: the temp folder); the files go to a temp folder inside it")
	n := flag.Int("n", 200, "durable writes per method")
	size := flag.Int("size", 64<<10, "bytes per write")
	batch := flag.Int("batch", 200, "files per batch")
	flag.Parse()
	d, err := os.MkdirTemp(*dir, "ccm-bench-fsync-") // removed at the end
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(d)
	*dir = d
	data := make([]byte, *size)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	fmt.Printf("benchfsync: %d writes of %d bytes in %s\n", *n, *size, *dir)
	for _, m := range []struct {
		name string
		sync func(*os.File) error
	}{
		{"fsync", fsync},
		{"fsutil.Sync", fsutil.Sync},
		{"fsync", fsync}, // again: the first round warms the disk
		{"fsutil.Sync", fsutil.Sync},
	} {
		var lat []time.Duration
		for i := 0; i < *n; i++ {
			start := time.Now()
			if err := durableWrite(filepath.Join(*dir, "f.jsonl"), data, m.sync); err != nil {
				fail(err)
			}
			lat = append(lat, time.Since(start))
		}
		report(m.name+" write", lat)
	}
	for round := 0; round < 2; round++ {
		for _, m := range []struct {
			name string
			sync func(*os.File) error
		}{{"fsync", fsync}, {"fsutil.SyncFiles", nil}} {
			sub := filepath.Join(*dir, fmt.Sprintf("batch-%d-%d", round, len(m.name)))
			if err := os.MkdirAll(sub, 0o700); err != nil {
				fail(err)
			}
			var files []string
			for i := 0; i < *batch; i++ {
				p := filepath.Join(sub, fmt.Sprintf("b%04d", i))
				if err := fsutil.WriteFileUnsynced(p, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(data[:4096]); return err }); err != nil {
					fail(err)
				}
				files = append(files, p)
			}
			start := time.Now()
			var err error
			if m.sync == nil {
				err = fsutil.SyncFiles(files, []string{sub})
			} else {
				for _, p := range files {
					if err = syncPath(p, m.sync); err != nil {
						break
					}
				}
			}
			if err != nil {
				fail(err)
			}
			report(fmt.Sprintf("%s batch of %d", m.name, *batch), []time.Duration{time.Since(start)})
		}
	}
}

// durableWrite is fsutil.WriteFile with the given sync for the file and
// the folder.
func durableWrite(path string, data []byte, sync func(*os.File) error) error {
	f, err := fsutil.CreateTemp(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := sync(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsutil.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncPath(filepath.Dir(path), sync)
}

func syncPath(path string, sync func(*os.File) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sync(f)
}

func report(what string, lat []time.Duration) {
	slices.Sort(lat)
	med, p90 := lat[len(lat)/2], lat[len(lat)*9/10]
	fmt.Printf("  %-28s median %8.2f ms   p90 %8.2f ms\n", what, ms(med), ms(p90))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchfsync:", err)
	os.Exit(1)
}
