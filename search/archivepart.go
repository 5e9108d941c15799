package search

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/internal/tar"
	"ccm/internal/textindex"
	"ccm/sessions/archive"
)

// Written is an archive just written: a file in the archive folder, or,
// with URL set, one just uploaded to object storage, of which Path is the
// local copy and Created its manifest's time.
type Written struct {
	Path    string
	URL     string
	Created time.Time
}

// IndexArchives writes the index parts of archives just written (ccm
// archive calls it with the sessions it archived), jobs at a time (0: the
// number of CPUs), so that no search has to read these archives: each is
// read once, as a stream, its stubs resolved from the store or from the
// content the archive carries; nothing is unpacked to disk. It works under
// the index's lock and only where ccm search made an index: ccm keeps no
// searchable text for a user who does not search. When another ccm holds
// the lock for more than a few seconds (a search building the index) it
// writes nothing: a search writes the parts it finds missing. It returns
// the archives whose part it could not write, each as an error.
func IndexArchives(ctx context.Context, home string, archives []Written, o PartOptions, jobs int) []error {
	if len(archives) == 0 || !Exists(home) {
		return nil
	}
	lk, err := fsutil.LockFile(ctx, filepath.Join(Dir(home), "lock"), true, archiveLockWait)
	if err != nil {
		return nil
	}
	defer lk.Unlock()
	errs := make([]error, len(archives))
	batch.Run(ctx, len(archives), jobs, func(i int) {
		if err := indexArchive(ctx, home, archives[i], o); err != nil {
			errs[i] = fmt.Errorf("%s: index part: %w", archives[i].Path, err)
		}
	}, nil)
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// archiveLockWait is how long IndexArchives waits for the index's lock.
const archiveLockWait = 5 * time.Second

// indexArchive writes one archive's part from the archive's stream: the
// part a search of its folder, or of the object storage it was uploaded
// to, reads (named and dated as remoteEntries names and dates it).
func indexArchive(ctx context.Context, home string, a Written, o PartOptions) error {
	fi, err := os.Stat(a.Path)
	if err != nil {
		return err
	}
	folder := filepath.Base(filepath.Dir(a.Path))
	session := strings.TrimSuffix(filepath.Base(a.Path), archive.Ext)
	info := PartInfo{Session: session, Folder: folder, ArchiveSize: fi.Size(), ArchiveMTime: fi.ModTime().UnixNano()}
	dst := PartPath(home, folder, session)
	if a.URL != "" {
		info.ArchiveMTime, dst = a.Created.UnixNano(), filepath.Join(Dir(home), remotePart(a.URL))
	}
	return partFromArchive(ctx, dst, a.Path, info, o)
}

// Exists reports whether ccm search made an index under home.
func Exists(home string) bool {
	_, err := os.Stat(filepath.Join(Dir(home), "catalog"))
	return err == nil
}

// partFromArchive writes the part of an archive that has none, reading
// the archive's stream once; nothing is unpacked to disk.
func partFromArchive(ctx context.Context, dst, archivePath string, info PartInfo, o PartOptions) error {
	if err := fsutil.MkdirPrivate(filepath.Dir(dst)); err != nil {
		return err
	}
	if m, err := archive.ReadSidecar(archive.SidecarPath(archivePath)); err == nil && m.Session == info.Session {
		info.Project = m.Project
		// The content of stubs that the store no longer has (pruned since
		// the session was archived) comes from the archive itself: it
		// carries the content its stubs stand for. Its members follow the
		// transcripts in the stream, so they are copied out first, in a
		// read of their own.
		if want := wanted(m, o.Has); len(want) > 0 {
			c, err := spillCarried(ctx, archivePath, dst, want)
			if err != nil {
				return err
			}
			defer c.close()
			o = o.withCarried(c)
		}
	}
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(f, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return fmt.Errorf("%s: %w: %v", archivePath, archive.ErrCorrupt, err)
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	// The members arrive one at a time: each transcript is written into
	// the part as it streams past (writePartFrom reads members in order).
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// A part is rebuilt from its archive when it is missing or
		// damaged, so it is renamed into place without an fsync.
		err := fsutil.WriteFileUnsynced(dst, fsutil.FileMode, func(w io.Writer) error {
			return writePartStream(w, info, pr, o)
		})
		pr.CloseWithError(err)
		done <- err
	}()
	main := "projects/" + info.Folder + "/" + info.Session + ".jsonl"
	sub := "projects/" + info.Folder + "/" + info.Session + "/subagents/"
	werr := func() error {
		for {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w: %v", archivePath, archive.ErrCorrupt, err)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			agent := ""
			switch {
			case h.Name == main:
			case strings.HasPrefix(h.Name, sub) && strings.HasSuffix(h.Name, ".jsonl") && !strings.Contains(h.Name[len(sub):], "/"):
				agent = strings.TrimSuffix(strings.TrimPrefix(path.Base(h.Name), "agent-"), ".jsonl")
			default:
				continue
			}
			if err := writeMember(pw, agent, tr); err != nil {
				return err
			}
		}
	}()
	pw.CloseWithError(werr)
	err = <-done
	if werr != nil {
		return werr
	}
	return err
}

// Members travel through the pipe framed as: agent line, then the
// member's bytes as 8-byte length-prefixed chunks, a zero length last.
func writeMember(w io.Writer, agent string, r io.Reader) error {
	if _, err := io.WriteString(w, strconv.Quote(agent)+"\n"); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	var n8 [8]byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			binary.LittleEndian.PutUint64(n8[:], uint64(n))
			if _, werr := w.Write(n8[:]); werr != nil {
				return werr
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	clear(n8[:])
	_, err := w.Write(n8[:])
	return err
}

// writePartStream is writePartFrom over members framed by writeMember.
func writePartStream(w io.Writer, info PartInfo, r io.Reader, o PartOptions) error {
	br := bufio.NewReaderSize(r, 1<<20)
	return writePartFrom(w, info, func() (*member, error) {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		agent, err := strconv.Unquote(strings.TrimSuffix(line, "\n"))
		if err != nil {
			return nil, err
		}
		return &member{Agent: agent, R: &chunkReader{r: br}}, nil
	}, o)
}

// chunkReader reads one member's length-prefixed chunks.
type chunkReader struct {
	r    *bufio.Reader
	left uint64
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		var n8 [8]byte
		if _, err := io.ReadFull(c.r, n8[:]); err != nil {
			return 0, err
		}
		c.left = binary.LittleEndian.Uint64(n8[:])
		if c.left == 0 {
			c.done = true
			return 0, io.EOF
		}
	}
	n, err := c.r.Read(p[:min(uint64(len(p)), c.left)])
	c.left -= uint64(n)
	return n, err
}

// archiveEntry is an archive found under the archive root, or in object
// storage (fetch set).
type archiveEntry struct {
	key, path, folder, session string
	size, mtime                int64
	part                       string // its index part, relative to the index's folder
	fetch                      func(ctx context.Context, dest string) error
}

// listArchives finds root/<folder>/<id>.tar.zst, statting each (relative
// to its folder: fsutil.StatDir), reading none.
func listArchives(root string) ([]archiveEntry, error) {
	folders, err := fsutil.StatDir(root, func(string) bool { return false })
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	isArchive := func(n string) bool { return strings.HasSuffix(n, archive.Ext) && !strings.HasPrefix(n, ".") }
	var out []archiveEntry
	for _, d := range folders {
		if !d.Dir {
			continue
		}
		dir := filepath.Join(root, d.Name)
		entries, err := fsutil.StatDir(dir, isArchive)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Dir {
				continue
			}
			p := filepath.Join(dir, e.Name)
			session := strings.TrimSuffix(e.Name, archive.Ext)
			out = append(out, archiveEntry{key: string(srcArchive) + p, path: p, folder: d.Name, session: session,
				size: e.Size, mtime: e.MTime, part: filepath.Join("parts", d.Name, session+".part")})
		}
	}
	return out, nil
}

func (ix *Index) diffArchive(a archiveEntry, old *fileEntry) *job {
	if old != nil && old.Size == a.size && old.MTime == a.mtime {
		return nil
	}
	e := &fileEntry{Src: srcArchive, Path: a.path, Part: a.part, Session: a.session, Folder: a.folder, Size: a.size, MTime: a.mtime}
	return &job{key: a.key, e: e, size: a.size, fresh: true, fetch: a.fetch}
}

// partFor opens an archive's part when it was written from that archive
// (its size, mtime and session) with these redaction patterns.
func partFor(ppath string, e *fileEntry, redact string) (*part, error) {
	p, err := openPart(ppath)
	if err == nil && (p.h.ArchiveSize != e.Size || p.h.ArchiveMTime != e.MTime || p.h.Session != e.Session || p.h.Redact != redact) {
		p.close()
		return nil, errBadPart
	}
	return p, err
}

// archive indexes an archived session from its part, writing the part
// from the archive first when it is missing, stale or damaged.
func (w *indexer) archive(ctx context.Context, j *job, dir string) (int64, error) {
	e := j.e
	ppath := filepath.Join(dir, e.Part)
	o := PartOptions{Resolve: w.src.Resolve, Has: w.src.Has, Redact: w.src.Redact}
	p, err := partFor(ppath, e, redactKey(o.Redact))
	if err != nil {
		from := e.Path
		if j.fetch != nil {
			local, done, err := j.download(ctx, dir)
			if errors.Is(err, errUnreadable) {
				return 0, nil
			}
			if err != nil {
				return 0, err // it names the archive
			}
			defer done()
			from = local
		}
		info := PartInfo{Session: e.Session, Folder: e.Folder, ArchiveSize: e.Size, ArchiveMTime: e.MTime}
		if err := partFromArchive(ctx, ppath, from, info, o); err != nil {
			// An unreadable archive indexes as empty; it is tried
			// again when it changes.
			os.Remove(ppath)
			return 0, nil
		}
		if p, err = openPart(ppath); err != nil {
			return 0, nil
		}
	}
	defer p.close()
	e.Project = p.h.Project
	err = p.each(func(frame int64, at uint32, l partLine) error {
		if w.full() {
			w.flush()
		}
		doc := textindex.Doc{File: e.No, Line: l.line, Off: uint64(frame), Len: at,
			Time: uint32(max(0, min(l.time, 1<<32-1))), Kind: l.kind, Tool: w.tool(l.tool)}
		if l.agent != "" {
			doc.Sub = 1
		}
		w.b.Start(doc)
		w.b.AddJSON(l.text)
		w.docs++
		if int64(doc.Time) > e.Last {
			e.Last = int64(doc.Time)
		}
		return nil
	})
	if err != nil {
		// Damaged after the messages before the damage were added: they
		// are dropped with the entry, and the next update writes the part
		// again from the archive.
		os.Remove(ppath)
		j.retry = true
		return 0, nil
	}
	e.Offset = e.Size
	return p.size, nil
}
