// The indexer: one worker's builder, the records of a transcript read into
// it, and the segments it writes.

package search

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"ccm/internal/fsutil"
	"ccm/internal/rawjson"
	"ccm/internal/textindex"
	"ccm/search/searchtext"
	"ccm/transcript"
)

// writeSegment writes a builder's documents as segment id, durably (the
// caller opens it).
func (ix *Index) writeSegment(id int, b *textindex.Builder, full bool) (segEntry, error) {
	e := segEntry{ID: id, Docs: b.Docs(), Text: b.TextBytes(), Full: full}
	path := ix.segPath(id)
	err := fsutil.WriteFile(path, fsutil.FileMode, func(w io.Writer) error {
		n, err := b.WriteTo(w)
		e.Size = n
		return err
	})
	return e, err
}

// indexer is one worker's state.
type indexer struct {
	src   Sources
	tool  func(string) uint16
	b     *textindex.Builder
	flush func()
	docs  int
	buf   []byte
	rd    *transcript.Reader // reused for every file, with its buffer
}

// full reports whether the builder should be written out before the next
// document.
func (w *indexer) full() bool {
	return w.b.Pairs() >= maxPairs || w.b.Docs() >= textindex.MaxDocs
}

// file indexes one job and returns the bytes it read.
func (w *indexer) file(ctx context.Context, j *job, dir string) (int64, error) {
	if j.e.Src == srcArchive {
		return w.archive(ctx, j, dir)
	}
	f, err := os.Open(j.e.Path)
	if errors.Is(err, fs.ErrNotExist) {
		j.e.Offset, j.e.Size = 0, 0 // gone since the listing: the next update drops it
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	x := &searchtext.Extractor{Resolve: w.src.Resolve}
	x.Restore(j.e.Pending)
	if w.rd == nil {
		w.rd = transcript.NewReader(nil)
		w.rd.Classify = false
	}
	r := w.rd
	r.Reset(io.NewSectionReader(f, j.from, j.size-j.from))
	e := j.e
	end := j.from
	for {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if !l.Terminated {
			break // being written: read again next time
		}
		e.Lines++
		end = j.from + l.Offset + int64(len(l.Raw))
		body := l.Body()
		if len(body) == 0 || body[0] != '{' {
			continue
		}
		if w.full() {
			w.flush()
		}
		doc := textindex.Doc{File: e.No, Line: e.Lines, Off: uint64(j.from + l.Offset), Len: uint32(min(len(body), 1<<32-1))}
		rec, ok := w.extract(x, body, doc)
		if !ok {
			continue
		}
		if e.Project == "" && rec.Cwd != "" {
			e.Project = strings.Clone(rec.Cwd)
		}
		if e.Session == "" {
			e.Session = sessionOf(body)
		}
		if t := rec.Time.Unix(); !rec.Time.IsZero() && t > e.Last {
			e.Last = t
		}
	}
	e.Offset = end
	e.FP = fingerprint(f, end)
	e.Pending = x.Pending()
	return end - j.from, nil
}

// extract adds one record's text as a document.
func (w *indexer) extract(x *searchtext.Extractor, body []byte, doc textindex.Doc) (searchtext.Record, bool) {
	started := false
	rec, ok := x.Line(body, func(kind uint8, text []byte, escaped bool) {
		if !started {
			w.b.Start(doc)
			started = true
		}
		w.add(text, escaped)
	})
	if !started {
		return rec, false
	}
	doc.Kind = rec.Kind
	doc.Tool = w.tool(rec.Tool)
	if !rec.Time.IsZero() && rec.Time.Unix() > 0 {
		doc.Time = uint32(min(rec.Time.Unix(), 1<<32-1))
	}
	w.b.Amend(doc)
	w.docs++
	return rec, ok
}

// add adds a piece of text, with the redaction patterns' matches blanked.
func (w *indexer) add(text []byte, escaped bool) {
	if len(w.src.Redact) == 0 {
		if escaped {
			w.b.AddJSON(text)
		} else {
			w.b.AddText(text)
		}
		return
	}
	if escaped {
		w.buf = searchtext.AppendUnescaped(w.buf[:0], text)
		text = w.buf
	}
	w.b.AddText(redactBytes(text, w.src.Redact))
}

// sessionOf is a record's sessionId (a flat agent file's session).
func sessionOf(body []byte) string {
	return strings.Clone(transcript.Field(rawjson.String(body), "sessionId").Str)
}
