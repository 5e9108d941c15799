package search

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// The catalog's files: the base (catalog) and the journal (catalog.log).
// Their lines, fields separated by tabs. A string is written as
// it is unless it holds a tab, a line break, a backslash or starts with a
// quote: then it is quoted (Go syntax).
//
//	header: ccm-search-catalog VERSION GEN REDACT NEXTNO NEXTSEG
//	H NEXTNO NEXTSEG         (journal: starts a record; the segments follow whole)
//	S ID SIZE DOCS TEXT FULL
//	T NAME                   (tools, in order; the journal adds new ones)
//	F SRC NO PATH PART SESSION AGENT FOLDER PROJECT SIZE MTIME DEV INO OFFSET LINES FP LAST PENDING
//	D KEY                    (journal: an entry removed)
//	end                      (base) / commit GEN CRC (journal: ends a record)

// appendStr writes a string field.
func appendStr(b []byte, s string) []byte {
	if strings.ContainsAny(s, "\t\n\r\\") || strings.HasPrefix(s, `"`) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// parseStr reads a string field.
func parseStr(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// appendSegs writes the segment lines.
func appendSegs(b []byte, segs []segEntry) []byte {
	for _, s := range segs {
		b = fmt.Appendf(b, "S\t%d\t%d\t%d\t%d\t%t\n", s.ID, s.Size, s.Docs, s.Text, s.Full)
	}
	return b
}

// appendFile writes an entry's line.
func appendFile(b []byte, f *fileEntry) []byte {
	b = append(b, 'F', '\t', f.Src, '\t')
	b = strconv.AppendUint(b, uint64(f.No), 10)
	for _, s := range []string{f.Path, f.Part, f.Session, f.Agent, f.Folder, f.Project} {
		b = append(b, '\t')
		b = appendStr(b, s)
	}
	for _, n := range []int64{f.Size, f.MTime, int64(f.Dev), int64(f.Ino), f.Offset, int64(f.Lines), int64(f.FP), f.Last} {
		b = append(b, '\t')
		b = strconv.AppendInt(b, n, 10)
	}
	b = append(b, '\t')
	return append(appendStr(b, strings.Join(f.Pending, "\n")), '\n')
}

// writeBase writes the whole catalog.
func (c *catalog) writeBase(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	b := fmt.Appendf(nil, "%s\t%d\t%d\t%s\t%d\t%d\n", catalogMagic, c.Version, c.Gen, strconv.Quote(c.Redact), c.NextNo, c.NextSeg)
	b = appendSegs(b, c.Segs)
	for _, t := range c.Tools {
		b = append(appendStr(append(b, 'T', '\t'), t), '\n')
	}
	bw.Write(b)
	keys := make([]string, 0, len(c.Files))
	for k := range c.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b = appendFile(b[:0], c.Files[k])
		bw.Write(b)
	}
	bw.WriteString("end\n")
	return bw.Flush()
}

// journalRecord is what changed since the last save.
func (c *catalog) journalRecord() []byte {
	b := fmt.Appendf(nil, "H\t%d\t%d\n", c.NextNo, c.NextSeg)
	b = appendSegs(b, c.Segs)
	for _, t := range c.Tools[len(c.Tools)-c.newTools:] {
		b = append(appendStr(append(b, 'T', '\t'), t), '\n')
	}
	keys := make([]string, 0, len(c.dirty))
	for k := range c.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if f := c.Files[k]; f != nil {
			b = appendFile(b, f)
		} else {
			b = append(appendStr(append(b, 'D', '\t'), k), '\n')
		}
	}
	return fmt.Appendf(b, "commit\t%d\t%d\n", c.Gen, crc32.ChecksumIEEE(b))
}

var errBadCatalog = errors.New("search index catalog is damaged")

// save makes the catalog durable: a journal record when little changed,
// else a new base (and the journal starts again). The segments it names
// are durable already.
func (c *catalog) save(dir string) error {
	base, log := dir+"/catalog", dir+"/catalog.log"
	rec := c.journalRecord()
	if fi, err := os.Stat(base); err == nil && c.logSize+int64(len(rec)) < max(maxJournal, fi.Size()/4) {
		f, err := fsutil.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, fsutil.FileMode)
		if err != nil {
			return err
		}
		created := c.logSize == 0
		_, err = f.Write(rec)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && created {
			err = fsutil.SyncDir(dir)
		}
		if err != nil {
			return err
		}
		c.logSize += int64(len(rec))
	} else {
		// A new generation, never one an old journal could name.
		old := c.Gen
		c.Gen = int(time.Now().UnixNano() & (1<<62 - 1))
		if err := fsutil.WriteFile(base, fsutil.FileMode, c.writeBase); err != nil {
			c.Gen = old
			return err
		}
		// The old journal names the old generation: replaying it is
		// already impossible; it goes.
		if err := os.Remove(log); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		c.logSize = 0
	}
	clear(c.dirty)
	c.newTools = 0
	return nil
}

// readCatalog reads the base and replays the journal's records of its
// generation. A torn last record (an update killed while writing it) is
// cut off: the update it described did not happen.
func readCatalog(dir string) (*catalog, error) {
	path := dir + "/catalog"
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &catalog{Files: map[string]*fileEntry{}}
	bad := func(line int) error { return fmt.Errorf("%w: %s line %d", errBadCatalog, path, line) }
	if !bytes.HasSuffix(data, []byte("\nend\n")) {
		return nil, bad(0)
	}
	body := string(data[:len(data)-len("end\n")])
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return nil, bad(1)
	}
	h := strings.Split(body[:nl], "\t")
	if len(h) != 6 || h[0] != catalogMagic {
		return nil, bad(1)
	}
	var e [5]error
	c.Version, e[0] = strconv.Atoi(h[1])
	c.Gen, e[1] = strconv.Atoi(h[2])
	c.Redact, e[2] = strconv.Unquote(h[3])
	var n uint64
	n, e[3] = strconv.ParseUint(h[4], 10, 32)
	c.NextNo = uint32(n)
	c.NextSeg, e[4] = strconv.Atoi(h[5])
	if errors.Join(e[:]...) != nil || c.Version != catalogVersion {
		return nil, bad(1)
	}
	if line, err := c.apply(body[nl+1:], false); err != nil {
		return nil, bad(line + 1)
	}
	c.reindex()
	if len(c.byNo) != len(c.Files) {
		return nil, bad(0)
	}
	if err := c.replay(dir + "/catalog.log"); err != nil {
		return nil, err
	}
	return c, nil
}

// replay applies the journal's records of the base's generation.
func (c *catalog) replay(log string) error {
	data, err := os.ReadFile(log)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	good := 0
	for rest := string(data); rest != ""; {
		i := strings.Index(rest, "\ncommit\t")
		if i < 0 {
			break
		}
		end := strings.IndexByte(rest[i+1:], '\n')
		if end < 0 {
			break
		}
		rec, commit := rest[:i+1], strings.Split(rest[i+1:i+1+end], "\t")
		sum, err := strconv.ParseUint(commit[len(commit)-1], 10, 32)
		if len(commit) != 3 || err != nil || uint32(sum) != crc32.ChecksumIEEE([]byte(rec)) {
			break
		}
		if commit[1] == strconv.Itoa(c.Gen) {
			if _, err := c.apply(rec, true); err != nil {
				return fmt.Errorf("%w: %s", errBadCatalog, log)
			}
		}
		good += i + 1 + end + 1
		rest = rest[i+1+end+1:]
	}
	if good < len(data) {
		// A torn record: cut it, so that records appended later are read.
		if err := os.Truncate(log, int64(good)); err != nil {
			return err
		}
	}
	c.logSize = int64(good)
	if len(c.byNo) != len(c.Files) {
		return fmt.Errorf("%w: %s", errBadCatalog, log)
	}
	return nil
}

// apply reads lines of the base or of a journal record into c. It returns
// the number of the line that failed.
func (c *catalog) apply(text string, journal bool) (int, error) {
	line := 0
	var fields [20]string
	for text != "" {
		nl := strings.IndexByte(text, '\n')
		if nl < 0 {
			return line, errBadCatalog
		}
		l := text[:nl]
		text = text[nl+1:]
		line++
		f := splitTabs(l, fields[:0])
		switch {
		case journal && f[0] == "H" && len(f) == 3:
			n, err1 := strconv.ParseUint(f[1], 10, 32)
			s, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				return line, errBadCatalog
			}
			c.NextNo, c.NextSeg, c.Segs = uint32(n), s, nil
		case f[0] == "S" && len(f) == 6:
			var s segEntry
			var e [5]error
			s.ID, e[0] = strconv.Atoi(f[1])
			s.Size, e[1] = strconv.ParseInt(f[2], 10, 64)
			s.Docs, e[2] = strconv.Atoi(f[3])
			s.Text, e[3] = strconv.ParseInt(f[4], 10, 64)
			s.Full, e[4] = strconv.ParseBool(f[5])
			if errors.Join(e[:]...) != nil {
				return line, errBadCatalog
			}
			c.Segs = append(c.Segs, s)
		case f[0] == "T" && len(f) == 2:
			t, err := parseStr(f[1])
			if err != nil {
				return line, errBadCatalog
			}
			c.Tools = append(c.Tools, t)
			if c.toolIDs != nil {
				c.toolIDs[t] = uint16(len(c.Tools))
			}
		case f[0] == "F" && len(f) == 18:
			fe, err := parseFileLine(f)
			if err != nil {
				return line, errBadCatalog
			}
			k := fe.key()
			if old := c.Files[k]; old != nil && c.byNo != nil {
				delete(c.byNo, old.No)
			}
			c.Files[k] = fe
			if c.byNo != nil {
				c.byNo[fe.No] = fe
			}
		case journal && f[0] == "D" && len(f) == 2:
			k, err := parseStr(f[1])
			if err != nil {
				return line, errBadCatalog
			}
			if old := c.Files[k]; old != nil {
				delete(c.byNo, old.No)
				delete(c.Files, k)
			}
		default:
			return line, errBadCatalog
		}
	}
	return line, nil
}

// splitTabs splits a line at its tabs into dst (a catalog line has at
// most 18 fields; more make the line's field count wrong, as it is).
func splitTabs(l string, dst []string) []string {
	for {
		i := strings.IndexByte(l, '\t')
		if i < 0 || len(dst) == cap(dst)-1 {
			return append(dst, l)
		}
		dst = append(dst, l[:i])
		l = l[i+1:]
	}
}

func parseFileLine(f []string) (*fileEntry, error) {
	var bad error
	str := func(s string) string {
		v, err := parseStr(s)
		if err != nil {
			bad = err
		}
		return v
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			bad = err
		}
		return v
	}
	if len(f[1]) != 1 || (f[1][0] != srcLive && f[1][0] != srcArchive) {
		return nil, errBadCatalog
	}
	fe := &fileEntry{Src: f[1][0], No: uint32(num(f[2]))}
	fe.Path, fe.Part, fe.Session, fe.Agent, fe.Folder, fe.Project = str(f[3]), str(f[4]), str(f[5]), str(f[6]), str(f[7]), str(f[8])
	fe.Size, fe.MTime = num(f[9]), num(f[10])
	fe.Dev, fe.Ino = uint64(num(f[11])), uint64(num(f[12]))
	fe.Offset, fe.Lines, fe.FP, fe.Last = num(f[13]), uint32(num(f[14])), uint32(num(f[15])), num(f[16])
	if p := str(f[17]); p != "" {
		fe.Pending = strings.Split(p, "\n")
	}
	if bad != nil {
		return nil, bad
	}
	return fe, nil
}
