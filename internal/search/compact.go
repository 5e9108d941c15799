package search

import (
	"context"
	"io"
	"os"
	"sort"

	"ccm/fsutil"
	"ccm/internal/textindex"
)

// The segments an update writes before its builder is full (each update
// that finds new text writes one) are merged once there are mergeAt of
// them, dropping the messages of files removed or rewritten since; a
// merged segment of fullSegment bytes or more counts as full. Full
// segments, the bulk of a first build, stay as they are.
const (
	mergeAt     = 8
	fullSegment = 8 << 20
)

// compact merges the small segments into one when there are enough of
// them. The merged segment is durable before the catalog names it; the
// old ones are removed after the catalog is saved (removeStray).
func (ix *Index) compact(ctx context.Context) error {
	var small []segEntry
	docs := 0
	for _, s := range ix.cat.Segs {
		if !s.Full && docs+s.Docs <= textindex.MaxDocs {
			small = append(small, s)
			docs += s.Docs
		}
	}
	if len(small) < mergeAt {
		return nil
	}
	return ix.merge(ctx, small)
}

// merge replaces segs with one segment of their live messages.
func (ix *Index) merge(ctx context.Context, segs []segEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	opened := make([]*textindex.Segment, len(segs))
	gone := map[int]bool{}
	for i, s := range segs {
		opened[i] = ix.segs[s.ID].s
		gone[s.ID] = true
	}
	id := ix.cat.NextSeg
	ix.cat.NextSeg++
	e := segEntry{ID: id}
	var text int64
	for _, s := range segs {
		text += s.Text
	}
	err := fsutil.WriteFile(ix.segPath(id), fsutil.FileMode, func(w io.Writer) error {
		cw := &counter{w: w}
		n, err := textindex.Merge(cw, opened, func(d textindex.Doc) bool { return ix.cat.byNo[d.File] != nil })
		e.Docs, e.Size = n, cw.n
		return err
	})
	if err != nil {
		os.Remove(ix.segPath(id))
		return err
	}
	if err := ix.openSeg(e); err != nil {
		return err
	}
	e.Text = ix.segs[id].s.TextBytes()
	e.Full = e.Size >= fullSegment
	var keep []segEntry
	for _, s := range ix.cat.Segs {
		if gone[s.ID] {
			ix.segs[s.ID].f.Close()
			delete(ix.segs, s.ID)
			continue
		}
		keep = append(keep, s)
	}
	keep = append(keep, e)
	sort.Slice(keep, func(i, j int) bool { return keep[i].ID < keep[j].ID })
	ix.cat.Segs = keep
	return nil
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
