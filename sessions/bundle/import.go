package bundle

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/sessions"
	"ccm/sessions/archive"
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
	// Placing, when set, is held while the places are checked and the
	// files renamed into them: imports running at once (each reads and
	// writes its own files freely) then never both find a place free.
	Placing sync.Locker
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
	if o.Placing != nil {
		o.Placing.Lock()
		defer o.Placing.Unlock()
	}
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
// the bundle is read: its sidecar when it has one that gives the bundle's
// size and SHA-256 (a download, or ccm export -o DIR), else its own
// MANIFEST.json, read by decompressing the stream without hashing it (the
// members' hashes are checked on the one pass that reads them). A
// manifest of another format is refused with the format it names.
func readManifest(path string) (*archive.Manifest, error) {
	if m, err := archive.ReadSidecar(archive.SidecarPath(path)); err == nil {
		if fi, err := os.Stat(path); err == nil && fi.Size() == m.ArchiveBytes {
			if sum, err := fileSHA256(path); err == nil && sum == m.ArchiveSHA256 {
				return m, nil
			}
		}
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
