package search

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Source kinds of an indexed file.
const (
	srcLive    = 'L' // a transcript in the config dir, read in place
	srcArchive = 'A' // an archived session, read from its index part
)

// fileEntry is one indexed file: a live transcript (main or subagent), or
// an archived session's index part.
type fileEntry struct {
	No      uint32 // the documents' File; a rewritten file gets a new one
	Src     byte
	Path    string // the transcript, or the archive
	Part    string // srcArchive: the index part, relative to the index dir
	Session string
	Agent   string // subagent id, "" for a main transcript
	Folder  string
	Project string // the real path, from the records' cwd
	Size    int64  // size when last seen (the archive's for srcArchive)
	MTime   int64  // ns
	Dev     uint64
	Ino     uint64
	Offset  int64  // bytes indexed: the end of the last whole line
	Lines   uint32 // lines indexed
	FP      uint32 // checksum of the bytes before Offset (see fingerprint)
	Last    int64  // newest record time, Unix seconds
	Pending []string
}

// segEntry is one segment of the index.
type segEntry struct {
	ID   int
	Size int64
	Docs int
	Text int64
	Full bool // written because its builder was full: never merged
}

// catalog is the index's table of contents: what is indexed, up to where,
// and in which segments. It is replaced whole, atomically, after the
// segments it names are durable.
type catalog struct {
	Version int
	Redact  string // a hash of the redaction patterns the text was indexed with
	NextNo  uint32
	NextSeg int
	Segs    []segEntry
	Tools   []string // tool names; a document's Tool is 1 + an index here
	Files   map[string]*fileEntry

	toolIDs map[string]uint16
	byNo    map[uint32]*fileEntry
}

const catalogVersion = 1

func newCatalog() *catalog {
	c := &catalog{Version: catalogVersion, NextNo: 1, Files: map[string]*fileEntry{}}
	c.reindex()
	return c
}

func (c *catalog) reindex() {
	c.toolIDs = map[string]uint16{}
	for i, t := range c.Tools {
		c.toolIDs[t] = uint16(i + 1)
	}
	c.byNo = map[uint32]*fileEntry{}
	for _, f := range c.Files {
		c.byNo[f.No] = f
	}
}

// tool returns the number of a tool name, adding it; 0 for none or when
// the table is full.
func (c *catalog) tool(name string) uint16 {
	if name == "" {
		return 0
	}
	if id, ok := c.toolIDs[name]; ok {
		return id
	}
	if len(c.Tools) >= 65535 {
		return 0
	}
	c.Tools = append(c.Tools, name)
	id := uint16(len(c.Tools))
	c.toolIDs[name] = id
	return id
}

func (c *catalog) toolName(id uint16) string {
	if id == 0 || int(id) > len(c.Tools) {
		return ""
	}
	return c.Tools[id-1]
}

// The catalog file is text: a header line, then one line per segment,
// tool and file, fields separated by tabs, strings quoted (Go syntax).
const catalogMagic = "ccm-search-catalog"

func (c *catalog) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%s\t%d\t%s\t%d\t%d\n", catalogMagic, c.Version, strconv.Quote(c.Redact), c.NextNo, c.NextSeg)
	for _, s := range c.Segs {
		fmt.Fprintf(bw, "S\t%d\t%d\t%d\t%d\t%t\n", s.ID, s.Size, s.Docs, s.Text, s.Full)
	}
	for _, t := range c.Tools {
		fmt.Fprintf(bw, "T\t%s\n", strconv.Quote(t))
	}
	keys := make([]string, 0, len(c.Files))
	for k := range c.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		f := c.Files[k]
		b = append(b[:0], 'F', '\t')
		b = strconv.AppendQuote(b, k)
		b = append(b, '\t')
		b = strconv.AppendUint(b, uint64(f.No), 10)
		b = append(b, '\t', f.Src, '\t')
		for _, s := range []string{f.Path, f.Part, f.Session, f.Agent, f.Folder, f.Project} {
			b = strconv.AppendQuote(b, s)
			b = append(b, '\t')
		}
		for _, n := range []int64{f.Size, f.MTime, int64(f.Dev), int64(f.Ino), f.Offset, int64(f.Lines), int64(f.FP), f.Last} {
			b = strconv.AppendInt(b, n, 10)
			b = append(b, '\t')
		}
		b = strconv.AppendQuote(b, strings.Join(f.Pending, "\n"))
		b = append(b, '\n')
		bw.Write(b)
	}
	bw.WriteString("end\n")
	return bw.Flush()
}

var errBadCatalog = errors.New("search index catalog is damaged")

func readCatalog(path string) (*catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &catalog{Files: map[string]*fileEntry{}}
	bad := func(line int) error { return fmt.Errorf("%w: %s line %d", errBadCatalog, path, line) }
	if !bytes.HasSuffix(data, []byte("\nend\n")) {
		return nil, bad(0)
	}
	lines := strings.Split(string(data[:len(data)-len("end\n")]), "\n")
	lines = lines[:len(lines)-1]
	for i, line := range lines {
		f := strings.Split(line, "\t")
		switch {
		case i == 0:
			if len(f) != 5 || f[0] != catalogMagic {
				return nil, bad(1)
			}
			var e1, e2, e3, e4 error
			c.Version, e1 = strconv.Atoi(f[1])
			c.Redact, e2 = strconv.Unquote(f[2])
			var n uint64
			n, e3 = strconv.ParseUint(f[3], 10, 32)
			c.NextNo = uint32(n)
			c.NextSeg, e4 = strconv.Atoi(f[4])
			if errors.Join(e1, e2, e3, e4) != nil || c.Version != catalogVersion {
				return nil, bad(1)
			}
		case f[0] == "S" && len(f) == 6:
			var s segEntry
			var e [5]error
			s.Full, e[4] = strconv.ParseBool(f[5])
			s.ID, e[0] = strconv.Atoi(f[1])
			s.Size, e[1] = strconv.ParseInt(f[2], 10, 64)
			s.Docs, e[2] = strconv.Atoi(f[3])
			s.Text, e[3] = strconv.ParseInt(f[4], 10, 64)
			if errors.Join(e[:]...) != nil {
				return nil, bad(i + 1)
			}
			c.Segs = append(c.Segs, s)
		case f[0] == "T" && len(f) == 2:
			t, err := strconv.Unquote(f[1])
			if err != nil {
				return nil, bad(i + 1)
			}
			c.Tools = append(c.Tools, t)
		case f[0] == "F" && len(f) == 19:
			fe, key, err := parseFileLine(f)
			if err != nil {
				return nil, bad(i + 1)
			}
			c.Files[key] = fe
		default:
			return nil, bad(i + 1)
		}
	}
	if len(lines) == 0 {
		return nil, bad(0)
	}
	c.reindex()
	if len(c.byNo) != len(c.Files) {
		return nil, bad(0)
	}
	return c, nil
}

func parseFileLine(f []string) (*fileEntry, string, error) {
	var errs []error
	unq := func(s string) string {
		v, err := strconv.Unquote(s)
		errs = append(errs, err)
		return v
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		errs = append(errs, err)
		return v
	}
	key := unq(f[1])
	fe := &fileEntry{No: uint32(num(f[2]))}
	if len(f[3]) != 1 || (f[3][0] != srcLive && f[3][0] != srcArchive) {
		return nil, "", errBadCatalog
	}
	fe.Src = f[3][0]
	fe.Path, fe.Part, fe.Session, fe.Agent, fe.Folder, fe.Project = unq(f[4]), unq(f[5]), unq(f[6]), unq(f[7]), unq(f[8]), unq(f[9])
	fe.Size, fe.MTime = num(f[10]), num(f[11])
	fe.Dev, fe.Ino = uint64(num(f[12])), uint64(num(f[13]))
	fe.Offset, fe.Lines, fe.FP, fe.Last = num(f[14]), uint32(num(f[15])), uint32(num(f[16])), num(f[17])
	if p := unq(f[18]); p != "" {
		fe.Pending = strings.Split(p, "\n")
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	return fe, key, nil
}
