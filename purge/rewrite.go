package purge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tidwall/gjson"

	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
)

// rewriter is the second pass: it streams the original lines and writes
// the new file according to the plan.
type rewriter struct {
	p     *Plan
	stub  *stubber
	buf   []byte
	buf2  []byte
	tmp   []byte
	edits []rawjson.Edit
	// onLine, when set, sees every record line written and whether it is
	// on the chain the purged file resumes with (for the token estimate).
	onLine func(line []byte, rec int)
	// terminate adds a newline to a last record that has none.
	terminate bool
	// Changed reports whether the output differs from the input.
	Changed bool
	// archiveStub stands for the archived region (with --archive-compacted).
	archiveStub stub.Stub
	copies      [][]byte // metadata records of the archived region, re-written after its stub
}

// write streams src (the original, up to its last complete line) to out.
func (w *rewriter) write(src io.Reader, out io.Writer) error {
	bw := bufio.NewWriterSize(out, 1<<20)
	rd := transcript.NewReader(src)
	// The scan validated every line and noted where each record starts,
	// and this pass reads the same bytes: a line is a record exactly when
	// it starts where the next record does, so it is not validated again.
	rd.Classify = false
	ix := w.p.scan.ix
	rec := -1
	arch := w.p.archive
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if rec+1 < ix.Len() && ix.Rec(rec+1).Offset == l.Offset {
			l.Kind = transcript.Object
		} else {
			l.Kind = transcript.Invalid
		}
		if arch != nil && l.Offset < arch.offset {
			// The archived region: stored whole, left out line by line.
			w.Changed = true
			if l.Kind == transcript.Object {
				rec++
				if arch.copies[rec] {
					w.copies = append(w.copies, append([]byte(nil), l.Raw...))
				}
			}
			continue
		}
		if l.Kind != transcript.Object {
			// Bad lines pass through verbatim: they are the user's bytes.
			if _, err := bw.Write(l.Raw); err != nil {
				return err
			}
			continue
		}
		rec++
		if b := bytes.TrimLeft(l.Raw, " \t\r"); len(b) == 0 || b[0] != '{' {
			return fmt.Errorf("line %d: the file changed between the two passes", l.Num)
		}
		if w.p.drop[rec] != keep {
			w.Changed = true
			continue
		}
		body := l.Body()
		term := l.Raw[len(body):]
		if len(term) == 0 && w.terminate {
			term = []byte{'\n'}
			w.Changed = true
			w.p.Stats.AddedNewline = true
		}
		if arch != nil && rec == arch.boundary {
			if _, err := bw.Write(append(arch.line(w.archiveStub, body), '\n')); err != nil {
				return err
			}
			for _, c := range w.copies {
				if _, err := bw.Write(c); err != nil {
					return err
				}
			}
		}
		if inj := w.p.inject; inj != nil && rec == inj.before {
			for _, il := range inj.lines(body) {
				w.Changed = true
				if _, err := bw.Write(append(il, '\n')); err != nil {
					return err
				}
				if w.onLine != nil {
					w.onLine(il, -1)
				}
			}
		}
		out, err := w.editLine(body, rec)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Num, err)
		}
		if len(out) != len(body) || &out[0] != &body[0] {
			w.Changed = true
		}
		if _, err := bw.Write(out); err != nil {
			return err
		}
		if _, err := bw.Write(term); err != nil {
			return err
		}
		if w.onLine != nil {
			w.onLine(out, rec)
		}
		if s := w.p.synth[rec]; s != nil {
			line := synthLine(body, s)
			w.Changed = true
			if _, err := bw.Write(append(line, '\n')); err != nil {
				return err
			}
			if w.onLine != nil {
				w.onLine(line, -1)
			}
		}
	}
	return bw.Flush()
}

// editLine applies the plan's edits to one line: the parent relink,
// renamed ids and stubs (values the plan found at these offsets, spliced
// together), then block removal. It returns body itself when nothing
// changes.
func (w *rewriter) editLine(body []byte, rec int) ([]byte, error) {
	line := body
	w.edits = w.edits[:0]
	s := rawjson.String(line)
	if sr := w.p.stubs[rec]; sr != nil {
		if lineSum(line) != sr.sum {
			return nil, errChanged
		}
		for i := range sr.stubs {
			ps := &sr.stubs[i]
			if err := w.stub.put(ps, line[ps.off:ps.off+ps.n]); err != nil {
				return nil, err
			}
			w.edits = append(w.edits, rawjson.Edit{Off: ps.off, N: ps.n, Repl: ps.text()})
		}
	}
	if r, ok := w.p.parent[rec]; ok {
		res := gjson.Get(s, "parentUuid")
		if res.Exists() {
			repl := []byte("null")
			if r.to != "" {
				repl = rawjson.Append(nil, r.to)
			}
			w.edits = append(w.edits, rawjson.ReplaceValue(res, repl))
		}
	}
	rm := w.p.remove[rec]
	if rn := w.p.renames[rec]; rn != nil {
		// Renamed ids are spliced inside blocks that stay; a block that
		// is also removed needs no rename.
		k := 0
		gjson.Get(s, "message.content").ForEach(func(_, blk gjson.Result) bool {
			if id, ok := rn[k]; ok && (rm == nil || !rm[k]) {
				field := "id"
				if blk.Get("type").Str == "tool_result" {
					field = "tool_use_id"
				}
				if v := blk.Get(field); v.Exists() {
					w.edits = append(w.edits, rawjson.ReplaceValue(v, rawjson.Append(nil, id)))
				}
			}
			k++
			return true
		})
	}
	if rm != nil {
		if c := gjson.Get(s, "message.content"); c.IsArray() {
			// Applied after the renames above, in a second splice: the
			// array edit would overlap them.
			if len(w.edits) > 0 {
				w.buf = rawjson.Splice(w.buf, line, w.edits)
				line = w.buf
				w.edits = w.edits[:0]
				s = rawjson.String(line)
				c = gjson.Get(s, "message.content")
			}
			w.edits = append(w.edits, rawjson.ReplaceValue(c, withoutElements(c, rm)))
		}
	}
	if len(w.edits) > 0 {
		w.tmp = rawjson.Splice(w.tmp, line, w.edits)
		w.buf, w.tmp = w.tmp, w.buf
		line = w.buf
	}
	return line, nil
}

// errChanged is a line that differs from the line the plan was made on.
var errChanged = errors.New("the file changed between the two passes")
