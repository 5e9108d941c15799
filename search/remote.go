// Archives in object storage: ccm search --archived --from s3://… indexes
// the archives a bucket holds as it indexes local ones, from index parts
// written once per archive object, so a search never downloads an archive
// twice.

package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/objstore"
	"ccm/sessions/archive"
)

// Remote is a place in object storage whose archives an update indexes
// beside the local sources: the caller lists it (each machine's newest
// archive of each session) and says how to download each archive.
type Remote struct {
	URL      string // s3://BUCKET/PREFIX; each archive's URL is under it
	Archives []RemoteArchive
}

// RemoteArchive is one archive in object storage, as its manifest gives it.
type RemoteArchive struct {
	// URL is the archive object's s3:// URL, under the Remote's URL at
	// <machine>/<folder>/<file>. Its name carries its content's SHA-256
	// prefix: an object never changes, a new archive is a new URL.
	URL     string
	Folder  string
	Session string
	Size    int64
	Created time.Time
	// Fetch downloads the archive to dest, checked against its manifest,
	// and writes the manifest beside it as its sidecar.
	Fetch func(ctx context.Context, dest string) error
}

// remoteParts is the folder, under parts/, of the parts of archives in
// object storage. Project folders are named after paths with every
// character but letters and digits made '-': none is named so.
const remoteParts = "@s3"

// isRemotePath reports whether an indexed archive is in object storage.
func isRemotePath(p string) bool { return strings.HasPrefix(p, objstore.Scheme) }

// inRemote reports whether an archive's URL is one of target's archives
// (<target>/<machine>/<folder>/<file>), not one under a longer prefix.
func inRemote(p, target string) bool {
	rest, ok := strings.CutPrefix(p, strings.TrimSuffix(target, "/")+"/")
	return ok && strings.Count(rest, "/") == 2
}

// visible reports whether an indexed file is one a query over remote
// ("" for the local sources) sees: a bucket's archives are searched only
// when it is named, and then alone.
func visible(f *fileEntry, remote string) bool {
	if remote == "" {
		return !isRemotePath(f.Path)
	}
	return inRemote(f.Path, remote)
}

// remoteEntries are a remote's archives as listed archives, each with its
// part named after its URL.
func remoteEntries(r *Remote) []archiveEntry {
	out := make([]archiveEntry, 0, len(r.Archives))
	for _, a := range r.Archives {
		out = append(out, archiveEntry{key: string(srcArchive) + a.URL, path: a.URL, folder: a.Folder, session: a.Session,
			size: a.Size, mtime: a.Created.UnixNano(), part: remotePart(a.URL), fetch: a.Fetch})
	}
	return out
}

// remotePart is the part of an archive in object storage, relative to the
// index's folder: named after its URL, which names its content.
func remotePart(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join("parts", remoteParts, hex.EncodeToString(sum[:16])+".part")
}

// fetchDir is where archives being indexed are downloaded to, under the
// index's folder; what a killed update left there goes at the next
// update, with a remote or not (under the index's lock, nobody else uses
// it).
func fetchDir(dir string) string { return filepath.Join(dir, "fetch") }

// fetched downloads a remote archive for its part to be written, and
// returns its local path and how to remove it. A download that does not
// match its manifest (archive.ErrCorrupt) indexes as empty, as an
// unreadable local archive does; any other failure (the server, the
// network) fails the update, so that the next one tries again.
func fetched(ctx context.Context, dir string, j *job) (string, func(), error) {
	parent := fetchDir(dir)
	if err := fsutil.MkdirPrivate(parent); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(parent, "")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.RemoveAll(tmp) }
	// A name of its own, not the session's: a bucket is input from
	// outside, and the part is written from what the listing gives.
	dest := filepath.Join(tmp, "archive"+archive.Ext)
	if err := j.fetch(ctx, dest); err != nil {
		done()
		if errors.Is(err, archive.ErrCorrupt) {
			return "", nil, errUnreadable
		}
		return "", nil, err
	}
	return dest, done, nil
}

// downloaded is a download a prefetch made for a job: the archive's path
// and how to remove it, or why there is none.
type downloaded struct {
	path string
	done func()
	err  error
}

// download returns the archive of a remote job: the one the prefetch
// made, or one it downloads itself.
func (j *job) download(ctx context.Context, dir string) (string, func(), error) {
	if j.got == nil {
		return fetched(ctx, dir, j)
	}
	select {
	case d := <-j.got:
		return d.path, d.done, d.err
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// Downloads run fetchAhead at once (the helper processes there are; fewer
// when Sources.Jobs asks for fewer workers), and at most fetchQueue wait
// for a worker to index them.
const (
	fetchAhead = 4
	fetchQueue = 8
)

// prefetch downloads the archives of the remote jobs that need one (no
// part written from them), ahead of the workers and in the order they take
// the jobs, so that downloads overlap indexing; stop cancels what is left
// and removes what no worker took.
func prefetch(ctx context.Context, dir string, jobs []*job, redact string, workers int) (stop func()) {
	var todo []*job
	for _, j := range jobs {
		if j.fetch == nil {
			continue
		}
		if p, err := partFor(filepath.Join(dir, j.e.Part), j.e, redact); err == nil {
			p.close()
			continue
		}
		j.got = make(chan downloaded, 1)
		todo = append(todo, j)
	}
	if len(todo) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	queue, ahead := make(chan struct{}, fetchQueue), make(chan struct{}, fetchAhead)
	if workers > 0 && workers < fetchAhead {
		ahead = make(chan struct{}, workers)
	}
	ended := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		defer func() { wg.Wait(); close(ended) }()
		for _, j := range todo {
			select {
			case queue <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				path, done, err := fetched(ctx, dir, j)
				<-ahead
				if err != nil {
					<-queue // nothing waits on disk
					j.got <- downloaded{done: func() {}, err: err}
					return
				}
				j.got <- downloaded{path, func() { done(); <-queue }, nil}
			}()
		}
	}()
	return func() {
		cancel()
		<-ended
		for _, j := range todo {
			select {
			case d := <-j.got:
				d.done()
			default:
			}
		}
	}
}

// errUnreadable is an archive that indexes as empty.
var errUnreadable = errors.New("unreadable archive")
