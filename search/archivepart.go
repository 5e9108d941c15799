package search

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/fsutil"
	"ccm/internal/textindex"
	"ccm/sessions/archive"
)

// IndexArchiveFile is IndexArchive from the archive's own stream, for a
// writer that has removed the originals already: the archive is read once,
// nothing is unpacked to disk.
func IndexArchiveFile(ctx context.Context, home, archivePath string, o PartOptions) error {
	if !Exists(home) {
		return nil
	}
	fi, err := os.Stat(archivePath)
	if err != nil {
		return err
	}
	folder := filepath.Base(filepath.Dir(archivePath))
	session := strings.TrimSuffix(filepath.Base(archivePath), archive.Ext)
	info := PartInfo{Session: session, Folder: folder, ArchiveSize: fi.Size(), ArchiveMTime: fi.ModTime().UnixNano()}
	return partFromArchive(ctx, PartPath(home, folder, session), archivePath, info, o)
}

// Exists reports whether ccm search made an index under home.
func Exists(home string) bool {
	_, err := os.Stat(filepath.Join(Dir(home), "catalog"))
	return err == nil
}

// partFromArchive writes the part of an archive that has none, reading
// the archive's stream once; nothing is unpacked to disk.
func partFromArchive(ctx context.Context, dst, archivePath string, info PartInfo, o PartOptions) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	if m, err := archive.ReadSidecar(archive.SidecarPath(archivePath)); err == nil && m.Session == info.Session {
		info.Project = m.Project
	}
	dec, err := zstd.NewReader(bufio.NewReaderSize(f, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return fmt.Errorf("%s: %w: %v", archivePath, archive.ErrCorrupt, err)
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	// The members arrive one at a time: each transcript is written into
	// the part as it streams past (WritePart reads members in order).
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := fsutil.MkdirPrivate(filepath.Dir(dst))
		if err == nil {
			// A part is rebuilt from its archive when it is missing or
			// damaged, so it is renamed into place without an fsync.
			err = fsutil.WriteFileUnsynced(dst, fsutil.FileMode, func(w io.Writer) error {
				return writePartStream(w, info, pr, o)
			})
		}
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

// writePartStream is WritePart over members framed by writeMember.
func writePartStream(w io.Writer, info PartInfo, r io.Reader, o PartOptions) error {
	br := bufio.NewReaderSize(r, 1<<20)
	return writePartFrom(w, info, func() (*Member, error) {
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
		return &Member{Agent: agent, R: &chunkReader{r: br}}, nil
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

// archiveEntry is an archive found under the archive root.
type archiveEntry struct {
	key, path, folder, session string
	size, mtime                int64
}

// listArchives finds root/<folder>/<id>.tar.zst, statting each, reading
// none.
func listArchives(root string) ([]archiveEntry, error) {
	folders, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []archiveEntry
	for _, d := range folders {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, archive.Ext) {
				continue
			}
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			p := filepath.Join(dir, n)
			out = append(out, archiveEntry{key: "A" + p, path: p, folder: d.Name(), session: strings.TrimSuffix(n, archive.Ext),
				size: fi.Size(), mtime: fi.ModTime().UnixNano()})
		}
	}
	return out, nil
}

func (ix *Index) diffArchive(a archiveEntry) *job {
	if old := ix.cat.Files[a.key]; old != nil && old.Size == a.size && old.MTime == a.mtime {
		return nil
	}
	rel := filepath.Join("parts", a.folder, a.session+".part")
	e := &fileEntry{Src: srcArchive, Path: a.path, Part: rel, Session: a.session, Folder: a.folder, Size: a.size, MTime: a.mtime}
	return &job{key: a.key, e: e, size: a.size, fresh: true}
}

// archive indexes an archived session from its part, writing the part
// from the archive first when it is missing, stale or damaged.
func (w *indexer) archive(ctx context.Context, j *job, dir string) (int64, error) {
	e := j.e
	ppath := filepath.Join(dir, e.Part)
	o := PartOptions{Resolve: w.src.Resolve, Redact: w.src.Redact}
	p, err := openPart(ppath)
	if err == nil && (p.h.ArchiveSize != e.Size || p.h.ArchiveMTime != e.MTime || p.h.Session != e.Session || p.h.Redact != redactKey(o.Redact)) {
		p.close()
		p, err = nil, errBadPart
	}
	if err != nil {
		info := PartInfo{Session: e.Session, Folder: e.Folder, ArchiveSize: e.Size, ArchiveMTime: e.MTime}
		if err := partFromArchive(ctx, ppath, e.Path, info, o); err != nil {
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
		os.Remove(ppath) // rewritten from the archive next time
		return 0, nil
	}
	e.Offset = e.Size
	return p.size, nil
}
