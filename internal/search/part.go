package search

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"

	"ccm/fsutil"
	"ccm/internal/archive"
	"ccm/internal/textindex"
	"ccm/transcript"
)

// An index part holds the searchable text of one archived session, so
// that a search reads it instead of the archive. It is a series of zstd
// frames of about partFrame bytes of JSON lines, one per message
// ({"m": agent, "l": line, "t": time, "k": kind, "tool": name,
// "text": text}), a last frame holding the part's header (partHeader), the
// header frame's offset (8 bytes) and partMagic. A message is found again
// by its frame's offset and its offset in the frame.
const (
	partFormat = "ccm-search-part/1"
	partMagic  = "CCMPART1"
	partFrame  = 1 << 20
	// maxPartHeader bounds the header frame a search decodes.
	maxPartHeader = 64 << 20
)

// PartInfo identifies the archived session a part indexes.
type PartInfo struct {
	Session string `json:"session"`
	Folder  string `json:"folder"`
	Project string `json:"project"`
	// The archive's size and mtime (ns): a part of another archive of
	// the same session is stale.
	ArchiveSize  int64 `json:"archive_size"`
	ArchiveMTime int64 `json:"archive_mtime"`
}

type partHeader struct {
	Format string `json:"format"`
	PartInfo
	Redact string  `json:"redact,omitempty"`
	Frames []int64 `json:"frames"` // each frame's offset, then the header frame's
}

// Member is one transcript of an archived session, read as a stream.
type Member struct {
	Agent string // the subagent's id; "" for the main transcript
	R     io.Reader
}

// PartOptions are how a part's text is read.
type PartOptions struct {
	Resolve func(key string) ([]byte, error) // stored content of stubs
	Redact  []*regexp.Regexp
}

type partDoc struct {
	M    string `json:"m,omitempty"`
	L    uint32 `json:"l"`
	T    int64  `json:"t,omitempty"`
	K    uint8  `json:"k"`
	Tool string `json:"tool,omitempty"`
	Text string `json:"text"`
}

// WritePart writes the index part of a session given its transcripts'
// streams: the main transcript and its subagents'. Memory is bounded by
// the longest line and one frame.
func WritePart(w io.Writer, info PartInfo, members []Member, o PartOptions) error {
	i := 0
	return writePartFrom(w, info, func() (*Member, error) {
		if i == len(members) {
			return nil, nil
		}
		i++
		return &members[i-1], nil
	}, o)
}

// writePartFrom is WritePart over members that next returns one at a
// time (nil after the last).
func writePartFrom(w io.Writer, info PartInfo, next func() (*Member, error), o PartOptions) error {
	enc := partEncoders.Get().(*zstd.Encoder)
	defer partEncoders.Put(enc)
	bw := bufio.NewWriterSize(w, 1<<20)
	var off int64
	h := partHeader{Format: partFormat, PartInfo: info, Redact: redactKey(o.Redact)}
	var frame []byte
	var out []byte
	emitFrame := func() {
		if len(frame) == 0 {
			return
		}
		out = enc.EncodeAll(frame, out[:0])
		h.Frames = append(h.Frames, off)
		bw.Write(out)
		off += int64(len(out))
		frame = frame[:0]
	}
	for {
		m, err := next()
		if err != nil {
			return err
		}
		if m == nil {
			break
		}
		x := &Extractor{Resolve: o.Resolve}
		r := transcript.NewReader(m.R)
		r.Classify = false
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			body := l.Body()
			if len(body) == 0 || body[0] != '{' {
				continue
			}
			text, rec := x.Text(body)
			if rec.Kind == 0 {
				continue
			}
			if len(o.Redact) > 0 {
				text = string(redactBytes([]byte(text), o.Redact))
			}
			d := partDoc{M: m.Agent, L: uint32(l.Num), K: rec.Kind, Tool: rec.Tool, Text: text}
			if !rec.Time.IsZero() {
				d.T = rec.Time.Unix()
			}
			if info.Project == "" && rec.Cwd != "" {
				h.Project = strings.Clone(rec.Cwd)
			}
			line, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if len(frame) > 0 && len(frame)+len(line) > partFrame {
				emitFrame()
			}
			frame = append(append(frame, line...), '\n')
		}
	}
	emitFrame()
	hdr, err := json.Marshal(h)
	if err != nil {
		return err
	}
	out = enc.EncodeAll(hdr, out[:0])
	bw.Write(out)
	var tail [16]byte
	binary.LittleEndian.PutUint64(tail[:], uint64(off))
	copy(tail[8:], partMagic)
	bw.Write(tail[:])
	return bw.Flush()
}

// partEncoders are reused: a new encoder allocates its tables (megabytes)
// each time, more than a small session's part costs to compress.
var partEncoders = sync.Pool{New: func() any {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	return e
}}

// PartPath is where the index part of an archived session lives.
func PartPath(home, folder, session string) string {
	return filepath.Join(Dir(home), "parts", folder, session+".part")
}

// IndexArchive writes the index part of an archive that was just written,
// from the session's transcripts (still in place: the main one and its
// subagents', as readers): the archive writer calls it so that no search
// has to read the archive. The part is written atomically, 0600 in 0700
// folders. Without a search index (ccm search never ran, or --forget) it
// writes nothing: ccm keeps no searchable text for a user who does not
// search.
func IndexArchive(home, archivePath string, info PartInfo, members []Member, o PartOptions) error {
	if !Exists(home) {
		return nil
	}
	fi, err := os.Stat(archivePath)
	if err != nil {
		return err
	}
	info.ArchiveSize, info.ArchiveMTime = fi.Size(), fi.ModTime().UnixNano()
	dst := PartPath(home, info.Folder, info.Session)
	if err := fsutil.MkdirPrivate(filepath.Dir(dst)); err != nil {
		return err
	}
	return fsutil.WriteFile(dst, fsutil.FileMode, func(w io.Writer) error { return WritePart(w, info, members, o) })
}

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

// part is an open index part.
type part struct {
	f     *os.File
	size  int64
	h     partHeader
	dec   *zstd.Decoder
	frame int64 // the decoded frame's offset, -1 for none
	data  []byte
}

var errBadPart = errors.New("index part is damaged")

func openPart(p string) (*part, error) {
	f, err := fsutil.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	pt := &part{f: f, frame: -1}
	if err := pt.readHeader(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return pt, nil
}

func (p *part) readHeader() error {
	fi, err := p.f.Stat()
	if err != nil {
		return err
	}
	p.size = fi.Size()
	if p.size < 16 {
		return errBadPart
	}
	var tail [16]byte
	if _, err := p.f.ReadAt(tail[:], p.size-16); err != nil {
		return err
	}
	hoff := int64(binary.LittleEndian.Uint64(tail[:]))
	if string(tail[8:]) != partMagic || hoff < 0 || hoff > p.size-16 || p.size-16-hoff > maxPartHeader {
		return errBadPart
	}
	p.dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20), zstd.WithDecoderMaxWindow(64<<20))
	raw := make([]byte, p.size-16-hoff)
	if _, err := p.f.ReadAt(raw, hoff); err != nil {
		return err
	}
	hdr, err := p.dec.DecodeAll(raw, nil)
	if err != nil || json.Unmarshal(hdr, &p.h) != nil || p.h.Format != partFormat {
		return errBadPart
	}
	prev := int64(-1)
	for _, o := range p.h.Frames {
		if o <= prev || o >= hoff {
			return errBadPart
		}
		prev = o
	}
	p.h.Frames = append(p.h.Frames, hoff)
	return nil
}

func (p *part) close() {
	p.dec.Close()
	p.f.Close()
}

// frameAt decodes the frame at offset off (one of the header's).
func (p *part) frameAt(off int64) ([]byte, error) {
	if p.frame == off {
		return p.data, nil
	}
	i := sortSearch(p.h.Frames, off)
	if i >= len(p.h.Frames)-1 || p.h.Frames[i] != off {
		return nil, errBadPart
	}
	raw := make([]byte, p.h.Frames[i+1]-off)
	if _, err := p.f.ReadAt(raw, off); err != nil {
		return nil, err
	}
	data, err := p.dec.DecodeAll(raw, p.data[:0])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadPart, err)
	}
	p.frame, p.data = off, data
	return data, nil
}

func sortSearch(a []int64, v int64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if a[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// doc reads the message at (frame, offset in it).
func (p *part) doc(frame int64, at uint32) (partDoc, error) {
	data, err := p.frameAt(frame)
	if err != nil {
		return partDoc{}, err
	}
	if int(at) >= len(data) {
		return partDoc{}, errBadPart
	}
	line := data[at:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var d partDoc
	if err := json.Unmarshal(line, &d); err != nil {
		return partDoc{}, errBadPart
	}
	return d, nil
}

// each calls fn with every message of the part, its frame and offset, and
// the raw inside of its text string.
func (p *part) each(fn func(frame int64, at uint32, d gjson.Result, text []byte) error) error {
	for i := 0; i+1 < len(p.h.Frames); i++ {
		data, err := p.frameAt(p.h.Frames[i])
		if err != nil {
			return err
		}
		for at := 0; at < len(data); {
			end := bytes.IndexByte(data[at:], '\n')
			if end < 0 {
				return errBadPart
			}
			line := data[at : at+end]
			if !gjson.ValidBytes(line) {
				return errBadPart
			}
			d := gjson.ParseBytes(line)
			t := d.Get("text").Raw
			if len(t) < 2 {
				return errBadPart
			}
			if err := fn(p.h.Frames[i], uint32(at), d, unsafeBytes(t[1:len(t)-1])); err != nil {
				return err
			}
			at += end + 1
		}
	}
	return nil
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
	err = p.each(func(frame int64, at uint32, d gjson.Result, text []byte) error {
		if w.full() {
			w.flush()
		}
		doc := textindex.Doc{File: e.No, Line: uint32(d.Get("l").Uint()), Off: uint64(frame), Len: at,
			Time: uint32(d.Get("t").Uint()), Kind: uint8(d.Get("k").Uint()), Tool: w.tool(d.Get("tool").Str)}
		if m := d.Get("m").Str; m != "" {
			doc.Sub = 1
		}
		w.b.Start(doc)
		w.b.AddJSON(text)
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
