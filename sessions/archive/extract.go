package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/fsutil"
)

// ExtractOptions of Extract.
type ExtractOptions struct {
	// Force replaces files of the session that exist where the archive's
	// would go; each is first renamed to <file>.backup.<stamp>, never
	// overwritten. A file that is not the session's is never replaced.
	Force bool
	// Touch gives the restored files the current time instead of their
	// archived mtimes, so Claude Code's sweep does not delete them at once.
	Touch bool
	Now   time.Time
	// Store receives the archive's content, durable and verified before
	// any file is in place; nil leaves the content out.
	Store *ccm.Store
	// AllowMissingContent restores the session from an archive whose
	// content part is missing or corrupt (its files must be intact): the
	// stubs whose content is lost stay stubs, and Extracted names them.
	AllowMissingContent bool

	resume bool // finishing an interrupted unarchive
}

// Extracted is what Extract did.
type Extracted struct {
	*Manifest
	// Content is how many content members went into the store.
	Content int
	// StaysStub are the keys of the session's stubs whose content is in
	// neither the archive nor the store: a restore leaves them stubs.
	StaysStub []string
	// BadContent are the content members that were missing or corrupt
	// (only with AllowMissingContent).
	BadContent []string
	// Kept are files an interrupted unarchive had put in place and that
	// changed since: they are newer than the archive's and stay.
	Kept []string
}

// ErrTargetExists means a file of the archive already exists in the
// config dir.
var ErrTargetExists = errors.New("already exists (pass --force to keep it as a backup and restore the archived one)")

// placed is one file of the archive and where it goes.
type placed struct {
	e        Entry
	dest     string
	kind     fileKind
	done     bool   // already in place, as archived (or kept, newer)
	kept     bool   // in place and newer than the archive's: left as it is
	conflict bool   // another file is there: --force backs it up
	tmp      string // staged copy
}

// Extract verifies an archive completely, then restores it: its content
// into the store (durable, verified), its files under configDir byte for
// byte with their modes and mtimes, each written to a temp file beside its
// place and hashed again, then renamed into place with the transcript
// last. Then the archive and its sidecar are removed. A corrupt archive, a
// path outside the session's, or an existing file without Force is
// refused and nothing changes. A kill at any point leaves a marker that
// Recover (or the next Extract of the archive) acts on.
func Extract(ctx context.Context, path, configDir string, o ExtractOptions) (*Extracted, error) {
	sc, err := scopeOf(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !o.resume {
		if err := o.pickUp(ctx, path, configDir); err != nil {
			return nil, err
		}
	}
	m, bad, err := verify(path, o.AllowMissingContent)
	if err != nil {
		return nil, err
	}
	x := &Extracted{Manifest: m}
	for k := range bad {
		x.BadContent = append(x.BadContent, k)
	}
	sort.Strings(x.BadContent)
	files, err := o.plan(sc, m, configDir, x)
	if err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	// Stage: a marker first, then folders, temp files and content.
	created := missingDirs(configDir, sc, m, files)
	if !o.resume {
		if err := writeMarker(path, &pending{Op: opUnarchive, Phase: phaseStage, ConfigDir: configDir, Started: o.Now, Created: created}, false); err != nil {
			return nil, err
		}
	}
	staged := false
	defer func() {
		if !staged && !o.resume {
			undoStage(path, configDir, &pending{Created: created})
		}
	}()
	for _, rel := range created {
		if err := fsutil.MkdirPrivate(filepath.Join(configDir, filepath.FromSlash(rel))); err != nil {
			return nil, err
		}
	}
	step("unarchive-staging")
	stubs, err := o.stage(ctx, path, sc, m, files, bad, x)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x.StaysStub = staysStub(o.Store, stubs, m, bad)
	step("unarchive-staged")
	// Commit: from here on the files move, and a recovery finishes the job.
	if err := writeMarker(path, &pending{Op: opUnarchive, Phase: phaseCommit, ConfigDir: configDir, Started: o.Now, Force: o.Force, Touch: o.Touch}, true); err != nil {
		return nil, err
	}
	staged = true
	step("unarchive-committed")
	if err := o.commit(configDir, sc, m, files); err != nil {
		return nil, err
	}
	step("unarchive-restored")
	// The session is back and durable: the archive goes, then its marker.
	if err := os.Remove(path); err != nil {
		return x, fmt.Errorf("restored, but removing the archive failed: %w", err)
	}
	step("unarchive-removed")
	os.Remove(SidecarPath(path))
	if err := removeMarker(path); err != nil {
		return x, err
	}
	os.Remove(filepath.Dir(path)) // the project's archive folder, when now empty
	return x, nil
}

// pickUp deals with a marker an earlier run left on the archive: an
// interrupted archive is finished or undone first, an interrupted stage
// undone, an interrupted commit resumed with its options.
func (o *ExtractOptions) pickUp(ctx context.Context, path, configDir string) error {
	p, err := readMarker(path)
	if err != nil || p == nil {
		return err
	}
	if !sameDir(p.ConfigDir, configDir) {
		return fmt.Errorf("%s: an unfinished %s of it into %s is pending: run ccm there first", path, p.Op, p.ConfigDir)
	}
	switch {
	case p.Op == opArchive:
		if _, err := recoverArchive(path, configDir); err != nil {
			return err
		}
		if _, err := os.Lstat(path); err != nil {
			return fmt.Errorf("%s: %w (an interrupted archive of it was undone: the session is in place)", path, err)
		}
	case p.Phase == phaseCommit:
		o.Force, o.Touch, o.resume = p.Force, p.Touch, true
		for _, e := range mustSidecarFiles(path) {
			removeTemps(filepath.Join(configDir, filepath.FromSlash(e.Path)))
		}
	default:
		return undoStage(path, configDir, p)
	}
	return nil
}

// mustSidecarFiles lists the files of an archive's sidecar (none when it
// cannot be read: the verify that follows says why).
func mustSidecarFiles(path string) []Entry {
	m, err := ReadSidecar(SidecarPath(path))
	if err != nil {
		return nil
	}
	return m.Files
}

// stage reads the archive again: every file not in place yet goes to a
// temp file beside its place (hashed again, synced), the content into the
// store (committed and verified). It returns the keys of the stubs in the
// archived transcripts.
func (o *ExtractOptions) stage(ctx context.Context, path string, sc scope, m *Manifest, files []*placed, bad map[string]bool, x *Extracted) (map[ccm.Key]struct{}, error) {
	byPath := map[string]*placed{}
	for _, f := range files {
		byPath[f.e.Path] = f
	}
	f, err := fsutil.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := walk{scope: sc, want: m, lenient: o.AllowMissingContent, skip: bad}
	w.file = func(e Entry, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := byPath[e.Path]
		if p.done {
			_, err := io.Copy(io.Discard, r)
			return err
		}
		removeTemps(p.dest)
		t, err := fsutil.CreateTemp(p.dest)
		if err != nil {
			return err
		}
		p.tmp = t.Name()
		h := sha256.New()
		_, err = io.Copy(io.MultiWriter(t, h), r)
		if err == nil && hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
			err = fmt.Errorf("%w: restored bytes differ", ErrCorrupt)
		}
		if err == nil {
			err = t.Chmod(e.Mode.Perm() &^ 0o022)
		}
		if err == nil {
			err = fsutil.Sync(t)
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err == nil && p.kind == kindLegacyAgent && !OwnAgent(p.tmp, sc.id) {
			err = fmt.Errorf("%w: its records are not the session's", ErrForeign)
		}
		return err
	}
	rd, err := readInto(ctx, f, w, o.Store, m)
	if err != nil {
		return nil, err
	}
	for k := range rd.walked.bad {
		if !bad[k] {
			bad[k] = true
			x.BadContent = append(x.BadContent, k)
		}
	}
	x.Content = rd.stored
	return rd.stubs, nil
}

// readOut is what readInto read.
type readOut struct {
	walked *walked
	stubs  map[ccm.Key]struct{} // the keys of the stubs in the transcripts
	stored int                  // content members put into the store
}

// readInto reads an archive with w: every member checked as walkArchive
// checks it, the transcripts handed to w.file scanned for stub keys on
// their way, and the content put into st through one batch, which is made
// durable and read back before readInto returns (nil st: the content is
// only verified). Every reader that brings an archive's session back,
// here or elsewhere, reads it through this.
func readInto(ctx context.Context, r io.Reader, w walk, st *ccm.Store, m *Manifest) (*readOut, error) {
	var sink *contentSink
	if st != nil && len(m.Content) > 0 {
		sink = newContentSink(st)
		defer sink.close()
	}
	stubs := &stub.KeyScanner{}
	if file := w.file; file != nil {
		w.file = func(e Entry, r io.Reader) error {
			if strings.Contains(e.Path, ".jsonl") && !strings.HasSuffix(e.Path, ".zst") {
				r = io.TeeReader(r, stubs)
				defer stubs.Flush()
			}
			return file(e, r)
		}
	}
	if sink != nil {
		w.content = func(c Content, r io.Reader) error { return sink.put(ctx, c, r) }
	}
	res, err := walkArchive(r, w)
	if err != nil {
		return nil, err
	}
	out := &readOut{walked: res, stubs: stubs.Keys}
	if sink != nil {
		if err := sink.commit(); err != nil {
			return nil, err
		}
		out.stored = len(sink.keys)
	}
	return out, nil
}

// staysStub lists the stub keys (found in the transcripts, or listed as
// missing when archived) whose content the store does not hold.
func staysStub(st *ccm.Store, stubs map[ccm.Key]struct{}, m *Manifest, bad map[string]bool) []string {
	all := map[string]bool{}
	for k := range stubs {
		all[string(k)] = true
	}
	for _, k := range m.Missing {
		all[k] = true
	}
	for k := range bad {
		if _, err := ccm.ParseKey(k); err == nil {
			all[k] = true
		}
	}
	var out []string
	for k := range all {
		if st != nil {
			if _, err := st.Stat(ccm.Key(k)); err == nil {
				continue
			}
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
