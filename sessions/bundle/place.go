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
	"path/filepath"
	"time"

	"ccm/ccm"
	"ccm/internal/fsutil"
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
	backup    bool // the file there is kept as a backup first
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

// walkInto reads the bundle once more: file members are rewritten for the
// mapping into temp files beside their places (or, dry, counted), stored
// content goes into the store, the note is read.
func walkInto(ctx context.Context, path string, m *archive.Manifest, mp *Mapping, p *Plan, o ImportOptions) (*staging, error) {
	st := &staging{cfg: o.ConfigDir, plan: p, mp: mp, m: m, oldID: m.Session}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var note *Note
	carried := map[ccm.Key]bool{}
	_, err = archive.Walk(bufio.NewReaderSize(f, 1<<20), m, func(e archive.Entry, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.Path == NotePath {
			note = &Note{}
			return json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(note)
		}
		if key, ok := KeyOfPath(e.Path); ok {
			carried[key] = true
			p.Blobs++
			return st.blob(ctx, key, r, o)
		}
		if archive.IsExtra(e.Path) {
			_, err := io.Copy(io.Discard, r) // another kind: not ours to place
			return err
		}
		return st.file(e, r, o)
	})
	if err != nil {
		st.discard()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if note != nil && note.Format != NoteFormat {
		st.discard()
		return nil, fmt.Errorf("%s: a %s bundle, which this ccm does not read (it reads %s): update ccm", path, note.Format, NoteFormat)
	}
	if note != nil {
		p.Machine = note.Machine
	}
	for _, r := range m.Refs {
		key, err := ccm.ParseKey(r)
		if err != nil || carried[key] {
			continue
		}
		if o.Store == nil || !o.Store.Exists() || o.Store.Verify(key) != nil {
			p.Missing = append(p.Missing, r)
		}
	}
	for _, d := range m.Dirs {
		d.Path = Rename(d.Path, m.Folder, p.Folder, m.Session, mp.NewID)
		st.dirs = append(st.dirs, d)
	}
	return st, nil
}

// blob puts one stored content into the store (checked against its key),
// or, dry, notes whether the store has it.
func (st *staging) blob(ctx context.Context, key ccm.Key, r io.Reader, o ImportOptions) error {
	if o.DryRun || o.Store == nil {
		if o.Store == nil || !o.Store.Exists() || o.Store.Verify(key) != nil {
			st.plan.BlobsAdded++
		}
		_, err := io.Copy(io.Discard, r)
		return err
	}
	added, err := o.Store.PutAs(ctx, key, r, ccm.Source{SessionPath: st.plan.Transcript})
	if err != nil {
		return fmt.Errorf("stored content %s: %w", key, err)
	}
	if added {
		st.plan.BlobsAdded++
	}
	return nil
}

// file writes one member, rewritten for the mapping, to a temp file
// beside its place (not yet synced: place syncs them all at once). Its
// SHA-256 is taken only when a file is at its place already, to compare.
func (st *staging) file(e archive.Entry, r io.Reader, o ImportOptions) error {
	rel := Rename(e.Path, st.m.Folder, st.plan.Folder, st.oldID, st.mp.NewID)
	dest := filepath.Join(st.cfg, filepath.FromSlash(rel))
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
		err = tmp.Chmod(e.Mode.Perm() | 0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
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

// conflicts checks every place: free, or holding the same bytes (kept),
// or, with force, to be kept as a backup; anything else is refused.
func (st *staging) conflicts(force bool) error {
	for _, f := range st.files {
		fi, err := os.Lstat(f.dest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Size() == f.size && f.sum != "" {
			if sum, err := fileSHA256(f.dest); err == nil && sum == f.sum {
				f.same = true
				st.plan.Unchanged++
				continue
			}
		}
		if !force {
			return fmt.Errorf("%s exists already and differs (remove it, or import with --new-id)", f.dest)
		}
		f.backup = true
		st.plan.Replaced = append(st.plan.Replaced, f.dest)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var h hash.Hash = sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// place renames every temp file into its place, the main transcript last
// (until it is there the client does not see the session, and a run that
// is stopped is finished by the next one), and makes it durable.
func (st *staging) place(o ImportOptions) error {
	stamp := o.Now.Format("20060102_150405.000")
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
		if err := st.rename(f, stamp); err != nil {
			return err
		}
		dirs[filepath.Dir(f.dest)] = true
	}
	if last != nil {
		if err := syncDirs(dirs); err != nil {
			return err
		}
		if err := st.rename(last, stamp); err != nil {
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

func (st *staging) rename(f *staged, stamp string) error {
	if f.backup {
		if err := os.Rename(f.dest, f.dest+".backup."+stamp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(f.tmp, f.dest); err != nil {
		return err
	}
	f.tmp = ""
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
