package bundle

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/prune"
	"ccm/sessions/archive"
)

// The second pass of an import: the bundle's members are written beside
// their places (rewritten for the mapping), its stored content goes into
// the store, and once all is checked the files are renamed into place.

// staged is one file written beside its place, not yet renamed into it.
type staged struct {
	tmp, dest string
	sum       string
	size      int64
	mtime     time.Time
	main      bool
	same      bool // the file there is identical: nothing to do
}

type staging struct {
	files   []*staged
	created []string // folders made, to remove on failure
	dirs    []archive.Entry
	cfg     string
	plan    *Plan
	oldID   string
	mp      *Mapping
	m       *archive.Manifest
	done    bool
}

// walkInto reads the bundle once, through archive.Read: file members are
// rewritten for the mapping into temp files beside their places (or, dry,
// counted), the stored content goes into the store, the note is read.
func walkInto(ctx context.Context, path string, m *archive.Manifest, mp *Mapping, p *Plan, o ImportOptions) (*staging, error) {
	st := &staging{cfg: o.ConfigDir, plan: p, mp: mp, m: m, oldID: m.Session}
	for _, d := range m.Dirs {
		d.Path = Rename(d.Path, m.Folder, p.Folder, m.Session, mp.NewID)
		if _, err := archive.CheckPlace(o.ConfigDir, p.Folder, mp.NewID, d.Path, true); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		st.dirs = append(st.dirs, d)
	}
	var note *Note
	res, err := archive.Read(ctx, path, m, archive.ReadOptions{Store: o.Store, DryRun: o.DryRun, AllowMissingContent: o.AllowMissingContent,
		File: func(e archive.Entry, r io.Reader) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return st.file(e, r, o)
		},
		Part: func(pt archive.Part, r io.Reader) error {
			if pt.Path != archive.PartPath(PartKind, PartName) {
				return nil // another kind: not ours to place
			}
			note = &Note{}
			if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(note); err != nil {
				return fmt.Errorf("%w: %s: %v", archive.ErrCorrupt, pt.Path, err)
			}
			return nil
		}})
	if err == nil && note != nil && note.Format != NoteFormat {
		err = formatError(path, note.Format)
	}
	if err != nil {
		st.discard()
		return nil, err
	}
	if note != nil {
		p.Machine, p.Redacted = note.Machine, note.Redacted
	}
	p.Content, p.ContentNew = res.Carried-len(res.BadContent), res.New
	p.StaysStub = append(p.StaysStub, res.StaysStub...)
	p.BadContent = res.BadContent
	return st, nil
}

// file writes one member, rewritten for the mapping, to a temp file
// beside its place (not yet synced: place syncs them all at once). Its
// SHA-256 is taken only when a file is at its place already, to compare.
// A flat agent file of an older client must be the session's: its
// records, rewritten, name the session's id.
func (st *staging) file(e archive.Entry, r io.Reader, o ImportOptions) error {
	rel := Rename(e.Path, st.m.Folder, st.plan.Folder, st.oldID, st.mp.NewID)
	dest, err := archive.CheckPlace(st.cfg, st.plan.Folder, st.mp.NewID, rel, false)
	if err != nil {
		return err
	}
	sf := &staged{dest: dest, mtime: e.MTime, main: rel == "projects/"+st.plan.Folder+"/"+st.mp.NewID+".jsonl"}
	if !o.KeepMTimes {
		sf.mtime = o.Now
	}
	st.plan.Files++
	st.files = append(st.files, sf)
	var w io.Writer = io.Discard
	var h hash.Hash
	if _, err := os.Lstat(dest); err == nil {
		h = sha256.New()
		w = h
	}
	var tmp *os.File
	if !o.DryRun {
		if err := st.mkdirs(filepath.Dir(dest)); err != nil {
			return err
		}
		t, err := fsutil.CreateTemp(dest)
		if err != nil {
			return err
		}
		tmp, sf.tmp = t, t.Name()
		if h != nil {
			w = io.MultiWriter(t, h)
		} else {
			w = t
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	n, err := st.copy(bw, r, IsTranscript(e.Path))
	if err == nil {
		err = bw.Flush()
	}
	sf.size = n
	if h != nil {
		sf.sum = hex.EncodeToString(h.Sum(nil))
	}
	st.plan.Bytes += n
	if tmp == nil {
		return err
	}
	if err == nil {
		err = tmp.Chmod(e.Mode.Perm()&^0o022 | 0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && path.Dir(rel) == "projects/"+st.plan.Folder && strings.HasPrefix(path.Base(rel), "agent-") && !archive.OwnAgent(sf.tmp, st.mp.NewID) {
		err = fmt.Errorf("%s: %w: its records are not the session's", e.Path, archive.ErrForeign)
	}
	return err
}

// copy streams a member, a transcript a record at a time through the
// mapping (each record written around its edits, never copied whole); it
// returns the bytes written.
func (st *staging) copy(w io.Writer, r io.Reader, jsonl bool) (int64, error) {
	cw := &counter{w: w}
	if !jsonl {
		_, err := io.Copy(cw, r)
		return cw.n, err
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a line longer than the buffer: gathered whole
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			edits, located, ided := st.mp.Edits(line)
			if located {
				st.plan.Located++
			}
			if ided {
				st.plan.Renumbered++
			}
			pos := 0
			for _, e := range edits {
				cw.Write(line[pos:e.Off])
				cw.Write(e.Repl)
				pos = e.Off + e.N
			}
			if _, werr := cw.Write(line[pos:]); werr != nil {
				return cw.n, werr
			}
		}
		if err == io.EOF {
			return cw.n, nil
		}
		if err != nil {
			return cw.n, err
		}
	}
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

func (st *staging) mkdirs(dir string) error {
	var missing []string
	for d := dir; d != st.cfg && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		st.created = append(st.created, missing[i])
	}
	return nil
}

// conflicts checks every place: free, or holding the same bytes (kept);
// anything else is refused.
func (st *staging) conflicts() error {
	for _, f := range st.files {
		fi, err := os.Lstat(f.dest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Size() == f.size && f.sum != "" {
			if _, sum, err := fsutil.FileSHA256(f.dest); err == nil && sum == f.sum {
				f.same = true
				st.plan.Unchanged++
				continue
			}
		}
		return fmt.Errorf("%s exists already and differs (remove it, or import with --new-id)", f.dest)
	}
	return nil
}

// place renames every temp file into its place, the main transcript last
// (until it is there the client does not see the session, and a run that
// is stopped is finished by the next one), and makes it durable.
func (st *staging) place(o ImportOptions) error {
	var temps []string
	for _, f := range st.files {
		if f.same {
			continue
		}
		if err := os.Chtimes(f.tmp, f.mtime, f.mtime); err != nil {
			return err
		}
		temps = append(temps, f.tmp)
	}
	if err := fsutil.SyncFiles(temps, nil); err != nil {
		return err
	}
	dirs := map[string]bool{}
	var last *staged
	for _, f := range st.files {
		if f.same {
			os.Remove(f.tmp)
			continue
		}
		if f.main {
			last = f
			continue
		}
		if err := st.rename(f); err != nil {
			return err
		}
		dirs[filepath.Dir(f.dest)] = true
	}
	if last != nil {
		if err := syncDirs(dirs); err != nil {
			return err
		}
		if err := st.rename(last); err != nil {
			return err
		}
		dirs[filepath.Dir(last.dest)] = true
	}
	st.done = true
	if o.KeepMTimes {
		for i := len(st.dirs) - 1; i >= 0; i-- {
			d := filepath.Join(st.cfg, filepath.FromSlash(st.dirs[i].Path))
			os.Chmod(d, st.dirs[i].Mode.Perm()|0o700)
			os.Chtimes(d, st.dirs[i].MTime, st.dirs[i].MTime)
			dirs[filepath.Dir(d)] = true
		}
	}
	return syncDirs(dirs)
}

func (st *staging) rename(f *staged) error {
	if err := fsutil.Rename(f.tmp, f.dest); err != nil {
		return err
	}
	f.tmp = ""
	if prune.IsTranscriptName(filepath.Base(f.dest)) {
		st.plan.Transcripts = append(st.plan.Transcripts, f.dest)
	}
	return nil
}

// discard removes what a failed or dry import wrote: its temp files and
// the folders it made (when empty).
func (st *staging) discard() {
	if st == nil || st.done {
		return
	}
	for _, f := range st.files {
		if f.tmp != "" {
			os.Remove(f.tmp)
		}
	}
	for i := len(st.created) - 1; i >= 0; i-- {
		os.Remove(st.created[i])
	}
	st.done = true
}

func syncDirs(dirs map[string]bool) error {
	for d := range dirs {
		if err := fsutil.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
