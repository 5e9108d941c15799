package bundle

import (
	"archive/tar"
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
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/fsutil"
	"ccm/internal/archive"
	"ccm/internal/sessions"
	"ccm/transcript"
)

// ImportOptions of Import.
type ImportOptions struct {
	ConfigDir string
	Store     *ccm.Store // where the stubs' content goes
	// Root is the new project root, checked by CheckRoot; "" keeps the
	// bundle's (which must then exist here).
	Root string
	// NewID gives the session a new id; "" keeps its own, which must not
	// exist in the config dir (unless Force).
	NewID string
	// Exact puts the session back where it was, byte for byte: same
	// project folder, records unchanged (unarchive); Root and NewID are
	// not used.
	Exact bool
	// Force replaces files that exist where the bundle's go, each kept as
	// <file>.backup.<stamp> first (unarchive --force).
	Force bool
	// KeepMTimes gives the files their archived mtimes; else they get the
	// current time (an old session would otherwise be deleted by Claude
	// Code's sweep at its next start).
	KeepMTimes bool
	DryRun     bool
	Now        time.Time
}

// Plan is what an import does, or with DryRun would do.
type Plan struct {
	Bundle     string   `json:"bundle"`
	Session    string   `json:"session"`
	NewID      string   `json:"new_id,omitempty"`
	OldRoot    string   `json:"old_root"`
	NewRoot    string   `json:"new_root"`
	Folder     string   `json:"folder"`
	Transcript string   `json:"transcript"`
	Files      int      `json:"files"`
	Bytes      int64    `json:"bytes"`
	Located    int64    `json:"records_relocated"`  // records whose cwd (or other location field) changes
	Renumbered int64    `json:"records_renumbered"` // records whose sessionId changes
	Blobs      int      `json:"blobs"`              // stored contents the bundle carries
	BlobsAdded int      `json:"blobs_added"`        // of them, new to the store
	Missing    []string `json:"missing"`            // stub keys in neither the bundle nor the store
	Replaced   []string `json:"replaced"`           // existing files kept as backups (Force)
	Unchanged  int      `json:"unchanged"`          // files already there, identical (a run that was stopped)
	Redacted   []string `json:"redacted,omitempty"`
	Machine    string   `json:"machine,omitempty"`
	Warnings   []string `json:"warnings"`
	Resume     string   `json:"resume"`
	mtimes     map[string]time.Time
}

// ErrExists means the session is in the config dir already.
var ErrExists = errors.New("exists in the config dir already")

// Import puts the session of a bundle (or archive) file where Claude Code
// finds it for the new root: every member is checked against the
// manifest, the members must all belong to the session, each record's
// cwd and location fields move from the old root to the new one and its
// sessionId to the new id (nothing else of a record changes), files are
// renamed for the new project folder and id, the stored content goes
// into the store, and the files go into place, the transcript last. A
// file of the bundle that is already there, identical, is kept (a run
// that was stopped and run again); any other existing file is refused
// (or, with Force, kept as a backup). Nothing is written until all is
// checked; on error nothing is left but stored content.
func Import(ctx context.Context, path string, o ImportOptions) (*Plan, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if _, err := sessions.ListProjects(o.ConfigDir); err != nil {
		return nil, err
	}
	m, err := readManifest(path)
	if err != nil {
		return nil, err
	}
	if err := checkMembers(m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &Plan{Bundle: path, Session: m.Session, OldRoot: m.Project, Redacted: m.Redacted, Missing: []string{},
		Replaced: []string{}, Warnings: []string{}, mtimes: map[string]time.Time{}}
	mp := &Mapping{OldRoot: Root(m.Project), OldID: m.Session, NewID: m.Session}
	switch {
	case o.Exact:
		p.NewRoot = m.Project
		o.NewID = ""
	case o.Root != "":
		p.NewRoot = o.Root
	case m.Project == "" || !filepath.IsAbs(m.Project):
		return nil, fmt.Errorf("%s: the session's project is %q, not a path of this system: give --cwd PATH", path, m.Project)
	default:
		if fi, err := os.Stat(m.Project); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: the session's project %s is not a directory here: give --cwd PATH", path, m.Project)
		}
		p.NewRoot = m.Project
	}
	mp.NewRoot = Root(p.NewRoot)
	if m.Project != "" && transcript.EncodeProjectDir(m.Project) != m.Folder && !o.Exact {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the records' project %s does not name the folder %s; records under it are moved all the same", m.Project, m.Folder))
	}
	if o.NewID != "" {
		if !safeName(o.NewID) {
			return nil, fmt.Errorf("new session id %q is not a file name", o.NewID)
		}
		mp.NewID, p.NewID = o.NewID, o.NewID
	}
	p.Folder = transcript.ProjectDirName(p.NewRoot)
	if o.Exact {
		p.Folder = m.Folder
	}
	if !safeName(p.Folder) {
		return nil, fmt.Errorf("--cwd %s gives the project folder %q, which is not a file name", p.NewRoot, p.Folder)
	}
	id := mp.NewID
	p.Transcript = filepath.Join(transcript.ProjectsDir(o.ConfigDir), p.Folder, id+".jsonl")
	p.Resume = "cd " + shellQuote(p.NewRoot) + " && claude --resume " + id
	if s, err := transcript.FindSession(o.ConfigDir, id); err == nil && !o.Force {
		hint := "import --new-id gives the imported session a new id"
		if s.Path == p.Transcript {
			hint = "it was imported already; --new-id imports it again as another session"
		}
		return nil, fmt.Errorf("session %s %w (%s; %s)", id, ErrExists, s.Path, hint)
	}
	st, err := walkInto(ctx, path, m, mp, p, o)
	if err != nil {
		return nil, err
	}
	defer st.discard()
	if err := st.conflicts(o.Force); err != nil {
		return nil, err
	}
	if o.DryRun {
		return p, nil
	}
	if err := st.place(o); err != nil {
		return nil, err
	}
	return p, nil
}

// checkMembers refuses a manifest that names anything outside its
// session, or a session id or folder that is not a plain file name.
func checkMembers(m *archive.Manifest) error {
	if !safeName(m.Session) || !safeName(m.Folder) {
		return fmt.Errorf("%w: session %q of folder %q is not a plain file name", archive.ErrCorrupt, m.Session, m.Folder)
	}
	for _, e := range m.Files {
		if !SessionPath(e.Path, m.Folder, m.Session) {
			return fmt.Errorf("%w: %s is not a file of session %s: refused", archive.ErrCorrupt, e.Path, m.Session)
		}
	}
	for _, d := range m.Dirs {
		if !SessionDir(d.Path, m.Folder, m.Session) {
			return fmt.Errorf("%w: folder %s is not one of session %s: refused", archive.ErrCorrupt, d.Path, m.Session)
		}
	}
	return nil
}

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

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%,=", r))
	}) < 0 {
		return s
	}
	if runtime.GOOS == "windows" {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readManifest is the manifest every member is then checked against as
// the bundle is read: its sidecar when it has one (a download, checked
// against it already), else its own MANIFEST.json, read by decompressing
// the stream without hashing it (the members' hashes are checked on the
// one pass that reads them). A manifest of another format is refused
// with the format it names.
func readManifest(path string) (*archive.Manifest, error) {
	if m, err := archive.ReadSidecar(archive.SidecarPath(path)); err == nil {
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(f, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, archive.ErrCorrupt, err)
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: %w: no %s (truncated?)", path, archive.ErrCorrupt, archive.ManifestName)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", path, archive.ErrCorrupt, err)
		}
		if h.Name != archive.ManifestName {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, 256<<20))
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", path, archive.ErrCorrupt, err)
		}
		var head struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(data, &head) == nil && head.Format != "" && head.Format != archive.Format {
			return nil, fmt.Errorf("%s: made in the %s format, which this ccm does not read (it reads %s): update ccm", path, head.Format, archive.Format)
		}
		m, err := archive.ParseManifest(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
}
