package search

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"ccm/internal/fsutil"
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

// tidy merges the small segments when there are enough of them, and
// saves the catalog that names the merged one. It is no part of bringing
// the index up to date: a search runs it after it has answered (With), so
// that the update that makes the eighth small segment answers as fast as
// the others.
func (ix *Index) tidy(ctx context.Context) error {
	n := len(ix.cat.Segs)
	if err := ix.compact(ctx); err != nil {
		return err
	}
	if len(ix.cat.Segs) == n {
		return nil
	}
	if err := ix.saveCatalog(); err != nil {
		return err
	}
	return ix.removeStray()
}

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
	err := fsutil.WriteFile(ix.segPath(id), fsutil.FileMode, func(w io.Writer) (err error) {
		e.Docs, e.Size, err = textindex.Merge(w, opened, func(d textindex.Doc) bool { return ix.cat.byNo[d.File] != nil })
		return err
	})
	if err != nil {
		os.Remove(ix.segPath(id))
		return err
	}
	empty := e.Docs == 0
	if empty {
		os.Remove(ix.segPath(id)) // every message was dead: no segment
	} else {
		if err := ix.openSeg(e); err != nil {
			return err
		}
		e.Text = ix.segs[id].s.TextBytes()
		e.Full = e.Size >= fullSegment
	}
	var keep []segEntry
	for _, s := range ix.cat.Segs {
		if gone[s.ID] {
			ix.segs[s.ID].f.Close()
			delete(ix.segs, s.ID)
			continue
		}
		keep = append(keep, s)
	}
	if !empty {
		keep = append(keep, e)
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].ID < keep[j].ID })
	ix.cat.Segs = keep
	return nil
}

// vacuumDead is the share of dead messages (of files removed, rewritten or
// archived since) past which Vacuum rewrites a segment.
const vacuumDead = 0.25

// Vacuum rewrites the segments whose messages are more than a quarter
// dead, so that the index does not grow with every rewrite of a transcript
// (a purge) or archived session: it reads every segment's document table
// (32 bytes a message), which a search does not, so ccm maintain runs it.
// It returns the number of segments rewritten.
func (ix *Index) Vacuum(ctx context.Context) (int, error) {
	var stale []segEntry
	for _, se := range ix.cat.Segs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		dead := 0
		err := ix.segs[se.ID].s.AllDocs(func(_ uint32, d textindex.Doc) bool {
			if ix.cat.byNo[d.File] == nil {
				dead++
			}
			return true
		})
		if err != nil {
			return 0, err
		}
		if se.Docs > 0 && float64(dead) > vacuumDead*float64(se.Docs) {
			stale = append(stale, se)
		}
	}
	for _, se := range stale {
		if err := ix.merge(ctx, []segEntry{se}); err != nil {
			return 0, err
		}
	}
	if len(stale) > 0 {
		if err := ix.saveCatalog(); err != nil {
			return 0, err
		}
		if err := ix.removeStray(); err != nil {
			return 0, err
		}
	}
	return len(stale), ix.removeStrayParts()
}

// removeStrayParts removes the parts no archive in the catalog is read
// from (a part written for an archive that was unarchived before any
// search saw it) and the temp files a killed part writer left: the text
// of sessions is kept only while their archives are. Vacuum runs it, after
// an update, so every archive there is has its entry.
func (ix *Index) removeStrayParts() error {
	inUse := ix.partsInUse()
	root := filepath.Join(ix.dir, "parts")
	folders, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, d := range folders {
		entries, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			rel := filepath.Join("parts", d.Name(), e.Name())
			if !inUse[rel] {
				if err := os.Remove(filepath.Join(ix.dir, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
		}
		os.Remove(filepath.Join(root, d.Name())) // when empty
	}
	return nil
}
