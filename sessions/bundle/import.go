package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"ccm/ccm"
	"ccm/internal/ui"
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
	// exist in the config dir.
	NewID string
	// KeepMTimes gives the files their archived mtimes; else they get the
	// current time (an old session would otherwise be deleted by Claude
	// Code's sweep at its next start).
	KeepMTimes bool
	// AllowMissingContent imports a bundle whose files are intact but
	// whose stored content is missing or corrupt: those stubs stay stubs.
	AllowMissingContent bool
	DryRun              bool
	Now                 time.Time
	// Placing, when set, is held while the places are checked and the
	// files renamed into them: imports running at once (each reads and
	// writes its own files freely) then never both find a place free.
	Placing sync.Locker
	// Taken, when set, is the config dir's session ids, listed once for
	// a run of imports, which adds each session it places (else each
	// import lists the config dir for its id).
	Taken *Taken
}

// Taken is the session ids of a config dir, with their transcripts: those
// there when it was listed and those imported since.
type Taken struct {
	mu    sync.Mutex
	paths map[string]string
}

// ListTaken lists the session ids of a config dir once, for a run of
// imports: the config dir is read once, not once for each.
func ListTaken(configDir string) (*Taken, error) {
	paths, err := sessions.IDs(configDir)
	if err != nil {
		return nil, err
	}
	return &Taken{paths: paths}, nil
}

func (t *Taken) lookup(id string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.paths[id]
	return p, ok
}

func (t *Taken) add(id, path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paths[id] = path
}

// existing is the transcript of session id in the config dir, if any.
func existing(o ImportOptions, id string) (string, bool) {
	if o.Taken != nil {
		return o.Taken.lookup(id)
	}
	if s, err := sessions.Find(o.ConfigDir, id, nil); err == nil && s.ID == id {
		return s.Main.Path, true
	}
	return "", false
}

// existsError refuses session id, which is in the config dir at path.
func existsError(id, path, want string) error {
	hint := "import --new-id gives the imported session a new id"
	if path == want {
		hint = "it was imported already; --new-id imports it again as another session"
	}
	return fmt.Errorf("session %s %w (%s; %s)", id, ErrExists, path, hint)
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
	Content    int      `json:"content"`            // stored contents the bundle carries
	ContentNew int      `json:"content_new"`        // of them, new to the store
	StaysStub  []string `json:"stays_stub"`         // stub keys in neither the bundle nor the store
	BadContent []string `json:"bad_content,omitempty"`
	Unchanged  int      `json:"unchanged"` // files already there, identical (a run that was stopped)
	Redacted   []string `json:"redacted,omitempty"`
	Machine    string   `json:"machine,omitempty"`
	Warnings   []string `json:"warnings"`
	Resume     string   `json:"resume"`
	// Transcripts are the JSONL files the import put in place.
	Transcripts []string `json:"-"`
}

// ErrExists means the session is in the config dir already.
var ErrExists = errors.New("exists in the config dir already")

// Import puts the session of a bundle (or archive) file where Claude Code
// finds it for the new root. The bundle is read as unarchive reads an
// archive (archive.Read: every member checked against the manifest and
// the session's own paths, the content into the store, durable before
// any file moves); each record's cwd and location fields move from the
// old root to the new one and its sessionId to the new id (nothing else
// of a record changes); the files are renamed for the new project folder
// and id, each place checked as unarchive checks its places
// (archive.CheckPlace), and go into place, the transcript last. A file
// already there, identical, is kept (a run that was stopped and run
// again); any other file in the way is refused. On error nothing is left
// but stored content.
func Import(ctx context.Context, path string, o ImportOptions) (*Plan, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if _, err := sessions.ListProjects(o.ConfigDir); err != nil {
		return nil, err
	}
	m, err := archive.PeekManifest(path)
	if err != nil {
		return nil, err
	}
	if err := CheckFormat(path, m); err != nil {
		return nil, err
	}
	p := &Plan{Bundle: path, Session: m.Session, OldRoot: m.Project, StaysStub: []string{}, Warnings: []string{}}
	mp := &Mapping{OldRoot: Root(m.Project), OldID: m.Session, NewID: m.Session}
	switch {
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
	if m.Project != "" && transcript.EncodeProjectDir(m.Project) != m.Folder {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the records' project %s does not name the folder %s; records under it are moved all the same", m.Project, m.Folder))
	}
	if o.NewID != "" {
		mp.NewID, p.NewID = o.NewID, o.NewID
	}
	p.Folder = transcript.ProjectDirName(p.NewRoot)
	id := mp.NewID
	rel := "projects/" + p.Folder + "/" + id + ".jsonl"
	if p.Transcript, err = archive.CheckPlace(o.ConfigDir, p.Folder, id, rel, false); err != nil {
		return nil, fmt.Errorf("--cwd %s gives the project folder %q, and session %s cannot go there: %w", p.NewRoot, p.Folder, id, err)
	}
	p.Resume = "cd " + ui.ShellQuote(p.NewRoot) + " && claude --resume " + id
	if path, ok := existing(o, id); ok {
		return nil, existsError(id, path, p.Transcript)
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
	if o.Taken != nil {
		// Another import of this run may have placed the id since.
		if path, ok := o.Taken.lookup(id); ok {
			return nil, existsError(id, path, p.Transcript)
		}
	}
	if err := st.conflicts(); err != nil {
		return nil, err
	}
	if !o.DryRun {
		if err := st.place(o); err != nil {
			return nil, err
		}
	}
	if o.Taken != nil {
		o.Taken.add(id, p.Transcript)
	}
	return p, nil
}
