package search

import (
	"context"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"sync"
	"time"

	"ccm/internal/batch"
	"ccm/internal/textindex"
)

// Sources are what an update indexes.
type Sources struct {
	ConfigDir   string
	ArchiveRoot string // "" for none
	// Remote, when set, is object storage whose archives are indexed too
	// (they are searched only by a query that names it: Query.Remote).
	Remote *Remote
	// Resolve returns the stored content of a [CCM_CACHED] stub's key.
	Resolve func(key string) ([]byte, error)
	// Has reports whether the store has a key's content, without reading
	// it (nil: no store); the content of an archived session's stubs that
	// the store lacks is read from its archive.
	Has func(key string) bool
	// Redact keeps the text these match out of the index.
	Redact []*regexp.Regexp
	Jobs   int
	// Progress, if set, is called with the bytes read so far and the
	// bytes to read.
	Progress func(done, total int64)
}

// UpdateStats tells what an update did.
type UpdateStats struct {
	New       int   `json:"new"`
	Grown     int   `json:"grown"`
	Rewritten int   `json:"rewritten"`
	Removed   int   `json:"removed"`
	Archives  int   `json:"archives"`
	Bytes     int64 `json:"bytes"` // bytes read
	Docs      int   `json:"docs"`  // messages added
	// ListSeconds is the time spent finding what changed (listing the
	// project folders, statting every transcript and archive);
	// IndexSeconds the time spent indexing it and saving the result.
	ListSeconds  float64 `json:"list_seconds"`
	IndexSeconds float64 `json:"index_seconds"`
	// Vacuumed is the number of segments Vacuum rewrote (ccm maintain).
	Vacuumed int `json:"vacuumed,omitempty"`
}

// maxPairs is how many (word, message) pairs a worker collects before it
// writes a segment: 16 bytes each while the segment is written.
const maxPairs = 6 << 20

type job struct {
	key   string
	e     *fileEntry // the entry as it will be after the job
	from  int64      // where to start reading
	size  int64      // where to stop
	fresh bool       // indexed from the start, under a new number
	// fetch downloads an archive in object storage (nil for a local one);
	// got, when set, delivers the download a prefetch made of it.
	fetch func(ctx context.Context, dest string) error
	got   chan downloaded
	// retry: the job failed in a way the next update redoes (a part
	// found damaged while it was read); its entry leaves the catalog, and
	// the messages it added are dead.
	retry bool
}

// Update brings the index up to date with the sources, and merges its
// small segments when there are enough of them.
func (ix *Index) Update(ctx context.Context, src Sources) (UpdateStats, error) {
	st, err := ix.update(ctx, src, listSources(src), time.Now())
	if err != nil {
		return st, err
	}
	return st, ix.tidy(ctx)
}

// listing is what a listing of the sources found: every live transcript
// and every archive, statted.
type listing struct {
	live []liveFile
	arcs []archiveEntry
	err  error
}

// listSources lists the sources (With does it while the index opens).
func listSources(src Sources) listing {
	var l listing
	if l.live, l.err = liveFiles(src.ConfigDir); l.err != nil {
		return l
	}
	if src.ArchiveRoot != "" {
		l.arcs, l.err = listArchives(src.ArchiveRoot)
	}
	if src.Remote != nil {
		l.arcs = append(l.arcs, remoteEntries(src.Remote)...)
	}
	return l
}

// update is Update from a listing that started at start.
func (ix *Index) update(ctx context.Context, src Sources, l listing, start time.Time) (st UpdateStats, err error) {
	if l.err != nil {
		return st, l.err
	}
	redact := redactKey(src.Redact)
	if ix.cat.Redact != redact {
		// Indexed under other redaction patterns: start again.
		ix.closeSegs()
		ix.cat = newCatalog()
		ix.cat.Redact = redact
	}
	// Entries listed again are marked with this update's number; the
	// rest are gone.
	ix.gen++
	var jobs []*job
	for _, lf := range l.live {
		old := ix.cat.Files[lf.key]
		if old != nil {
			old.seen = ix.gen
		}
		if j := ix.diffLive(lf, old, &st); j != nil {
			jobs = append(jobs, j)
		}
	}
	for _, a := range l.arcs {
		old := ix.cat.Files[a.key]
		if old != nil {
			old.seen = ix.gen
		}
		if j := ix.diffArchive(a, old); j != nil {
			jobs = append(jobs, j)
			st.Archives++
		}
	}
	var goneParts []string
	for k, f := range ix.cat.Files {
		if f.seen != ix.gen && isRemotePath(f.Path) && (src.Remote == nil || !inRemote(f.Path, src.Remote.URL)) {
			// In object storage this update did not list: kept.
			f.seen = ix.gen
		}
		if f.seen != ix.gen {
			if f.Src == srcArchive {
				goneParts = append(goneParts, f.Part)
			}
			ix.cat.del(k)
			st.Removed++
		}
	}
	listed := time.Now()
	st.ListSeconds = listed.Sub(start).Seconds()
	defer func() { st.IndexSeconds = time.Since(listed).Seconds() }()
	os.RemoveAll(fetchDir(ix.dir)) // downloads a killed update left, whatever this one indexes
	if len(jobs) > 0 {
		if err := ix.run(ctx, jobs, src, &st); err != nil {
			return st, err
		}
	}
	if len(ix.cat.dirty) > 0 || ix.Rebuilt != "" || len(jobs) > 0 {
		if err := ix.saveCatalog(); err != nil {
			return st, err
		}
	}
	// The text of an archive that is gone (unarchived, removed) goes with
	// it, unless another archive of the session uses the same part.
	if len(goneParts) > 0 {
		inUse := ix.partsInUse()
		for _, p := range goneParts {
			if !inUse[p] {
				os.Remove(filepath.Join(ix.dir, p))
			}
		}
	}
	return st, ix.removeStray()
}

// partsInUse are the parts the catalog's archives are read from.
func (ix *Index) partsInUse() map[string]bool {
	in := map[string]bool{}
	for _, f := range ix.cat.Files {
		if f.Src == srcArchive {
			in[f.Part] = true
		}
	}
	return in
}

// diffLive decides what to do with a live transcript: nothing, index its
// new bytes, or index it afresh.
func (ix *Index) diffLive(lf liveFile, old *fileEntry, st *UpdateStats) *job {
	if old != nil && old.Size == lf.size && old.MTime == lf.mtime && old.Dev == lf.dev && old.Ino == lf.ino {
		return nil
	}
	e := &fileEntry{Src: srcLive, Path: lf.path, Session: lf.session, Agent: lf.agent, Folder: lf.folder,
		Size: lf.size, MTime: lf.mtime, Dev: lf.dev, Ino: lf.ino}
	if old != nil && old.Dev == lf.dev && old.Ino == lf.ino && lf.size >= old.Offset && fingerprintOK(lf.path, old) {
		ne := *old
		ne.Size, ne.MTime = lf.size, lf.mtime
		if lf.size == old.Offset {
			ix.cat.put(&ne) // touched, or a torn last line still torn
			return nil
		}
		st.Grown++
		return &job{key: lf.key, e: &ne, from: old.Offset, size: lf.size}
	}
	if old != nil {
		st.Rewritten++
	} else {
		st.New++
	}
	return &job{key: lf.key, e: e, size: lf.size, fresh: true}
}

// fingerprint is a checksum of up to 1 KiB before off: a file whose bytes
// there changed was rewritten, not appended to.
func fingerprint(r io.ReaderAt, off int64) uint32 {
	n := min(off, 1024)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, off-n); err != nil {
		return 0
	}
	return crc32.ChecksumIEEE(buf)
}

func fingerprintOK(path string, e *fileEntry) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return fingerprint(f, e.Offset) == e.FP
}

// run indexes the jobs with src.Jobs workers, oldest files first so that
// document numbers roughly follow time, and adds their segments.
func (ix *Index) run(ctx context.Context, jobs []*job, src Sources, st *UpdateStats) error {
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].e.MTime < jobs[j].e.MTime })
	var total int64
	for _, j := range jobs {
		if j.fresh {
			j.e.No = ix.cat.NextNo
			ix.cat.NextNo++
		}
		total += j.size - j.from
	}
	workers := src.Jobs
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		done     int64
		newSegs  []segEntry
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	flush := func(b *textindex.Builder, full bool) {
		if b.Docs() == 0 {
			return
		}
		mu.Lock()
		id := ix.cat.NextSeg
		ix.cat.NextSeg++
		mu.Unlock()
		se, err := ix.writeSegment(id, b, full)
		if err == nil {
			mu.Lock()
			if err = ix.openSeg(se); err == nil {
				newSegs = append(newSegs, se)
			}
			mu.Unlock()
		}
		if err != nil {
			os.Remove(ix.segPath(id))
			fail(err)
		}
	}
	tool := func(name string) uint16 {
		mu.Lock()
		defer mu.Unlock()
		return ix.cat.tool(name)
	}
	var indexers []*indexer
	newWorker := func() *indexer {
		// Room for the pairs of this update's bytes (about one per 16
		// bytes read), at most a full builder's.
		b := textindex.NewBuilder(int(min(total/16/int64(workers), maxPairs+maxPairs/8)))
		w := &indexer{src: src, tool: tool, b: b}
		w.flush = func() {
			flush(b, true)
			b.Reset()
		}
		mu.Lock()
		indexers = append(indexers, w)
		mu.Unlock()
		return w
	}
	stopFetch := prefetch(ctx, ix.dir, jobs, redactKey(src.Redact), src.Jobs)
	batch.RunWith(ctx, len(jobs), workers, newWorker, func(w *indexer, i int) {
		n, err := w.file(ctx, jobs[i], ix.dir)
		if err != nil {
			fail(err)
			return
		}
		mu.Lock()
		done += n
		st.Bytes += n
		if src.Progress != nil {
			src.Progress(done, total)
		}
		mu.Unlock()
	}, nil)
	stopFetch()
	// Each worker's last builder, not full, is a segment of its own,
	// written in parallel as the workers would have.
	batch.Run(ctx, len(indexers), workers, func(i int) { flush(indexers[i].b, false) }, nil)
	for _, w := range indexers {
		st.Docs += w.docs
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		for _, s := range newSegs {
			ix.segs[s.ID].f.Close()
			delete(ix.segs, s.ID)
			os.Remove(ix.segPath(s.ID))
		}
		return firstErr
	}
	sort.Slice(newSegs, func(i, j int) bool { return newSegs[i].ID < newSegs[j].ID })
	ix.cat.Segs = append(ix.cat.Segs, newSegs...)
	for _, j := range jobs {
		if j.retry {
			ix.cat.del(j.key)
			continue
		}
		ix.cat.put(j.e)
	}
	return nil
}
