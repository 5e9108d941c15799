package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
	"ccm/internal/rawjson"
	"ccm/search/searchtext"
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

// member is one transcript of an archived session, read as a stream.
type member struct {
	Agent string // the subagent's id; "" for the main transcript
	R     io.Reader
}

// PartOptions are how a part's text is read.
type PartOptions struct {
	Resolve func(key string) ([]byte, error) // stored content of stubs
	// Has reports whether the store has a key's content (nil: no store);
	// what it lacks is read from the archive.
	Has    func(key string) bool
	Redact []*regexp.Regexp
}

type partDoc struct {
	M    string `json:"m,omitempty"`
	L    uint32 `json:"l"`
	T    int64  `json:"t,omitempty"`
	K    uint8  `json:"k"`
	Tool string `json:"tool,omitempty"`
	Text string `json:"text"`
}

// appendTo writes the message's JSON line (what encoding/json writes for
// partDoc, a good deal faster: parts are written for whole archives).
func (d *partDoc) appendTo(b []byte) []byte {
	b = append(b, '{')
	if d.M != "" {
		b = rawjson.Append(append(b, `"m":`...), d.M)
		b = append(b, ',')
	}
	b = strconv.AppendUint(append(b, `"l":`...), uint64(d.L), 10)
	if d.T != 0 {
		b = strconv.AppendInt(append(b, `,"t":`...), d.T, 10)
	}
	b = strconv.AppendUint(append(b, `,"k":`...), uint64(d.K), 10)
	if d.Tool != "" {
		b = rawjson.Append(append(b, `,"tool":`...), d.Tool)
	}
	b = rawjson.Append(append(b, `,"text":`...), d.Text)
	return append(b, '}')
}

// writePartFrom writes the index part of a session whose transcripts
// (the main one and its subagents') next returns one at a time, nil after
// the last. Memory is bounded by the longest line and one frame.
func writePartFrom(w io.Writer, info PartInfo, next func() (*member, error), o PartOptions) error {
	enc := partEncoders.Get().(*zstd.Encoder)
	defer partEncoders.Put(enc)
	bw := bufio.NewWriterSize(w, 1<<20)
	var off int64
	h := partHeader{Format: partFormat, PartInfo: info, Redact: redactKey(o.Redact)}
	var frame, out, line []byte
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
		x := &searchtext.Extractor{Resolve: o.Resolve}
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
			line = d.appendTo(line[:0])
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
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	return e
}}

// PartPath is where the index part of an archived session lives.
func PartPath(home, folder, session string) string {
	return filepath.Join(Dir(home), "parts", folder, session+".part")
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

// partLine is one message of a part as each reads it, without decoding
// its text.
type partLine struct {
	agent string
	line  uint32
	time  int64
	kind  uint8
	tool  string
	text  []byte // the inside of the text's JSON string
}

var partKeys = []string{"m", "l", "t", "k", "tool", "text"}

// each calls fn with every message of the part, its frame and offset.
func (p *part) each(fn func(frame int64, at uint32, l partLine) error) error {
	var m [6]gjson.Result
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
			line := rawjson.String(data[at : at+end])
			if !gjson.Valid(line) {
				return errBadPart
			}
			transcript.Members(line, partKeys, m[:])
			t := m[5].Raw
			if len(t) < 2 || t[0] != '"' {
				return errBadPart
			}
			pl := partLine{agent: searchtext.RawStr(m[0]), line: uint32(gjson.Parse(m[1].Raw).Uint()), time: gjson.Parse(m[2].Raw).Int(),
				kind: uint8(gjson.Parse(m[3].Raw).Uint()), tool: searchtext.RawStr(m[4]), text: rawjson.Bytes(t[1 : len(t)-1])}
			if err := fn(p.h.Frames[i], uint32(at), pl); err != nil {
				return err
			}
			at += end + 1
		}
	}
	return nil
}
