// Package remote keeps session archives and exported bundles in
// S3-compatible object storage, for a team or a fleet: one bucket, each
// machine under its own prefix, every machine's archives in one listing.
//
// Layout under s3://BUCKET/PREFIX:
//
//	<machine>/<project folder>/<session>.<sha>.tar.zst   the archive (sessions/archive's format)
//	<machine>/<project folder>/<session>.manifest.json   its manifest, with the archive's size and SHA-256
//
// <sha> is the first 16 hex digits of the archive's SHA-256: an archive
// object is never replaced by other bytes, only added. The manifest is
// written last and is the commit marker: an archive counts only when a
// manifest in its place names it (by its SHA-256), names the same
// machine, folder and session as its key, and gives the size the archive
// object has. An upload stopped at any point leaves the previous complete
// pair (or none) and maybe an archive object no manifest names, which no
// listing shows; a new archive of the session replaces the manifest in one
// write, then, once the upload is committed, the archive it named goes (an
// upload undone puts that manifest back instead). So no upload, not even
// one of a run that was stopped and finishes late, can leave a manifest
// naming bytes it does not describe.
//
// Every upload is checked by the server against the SHA-256 it is signed
// with (see internal/objstore/s3http); every download is checked against
// the manifest's SHA-256 before anything is read from it. The requests run
// in the ccm-s3 helper (internal/objstore/agent).
package remote

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/internal/objstore"
	"ccm/internal/objstore/agent"
	"ccm/sessions/archive"
)

// Target is a place in object storage that holds archives: a bucket and
// prefix, and the name this machine writes under.
type Target struct {
	Client  objstore.Store
	Loc     objstore.Location
	Machine string
	// Endpoint is the server ("" for AWS S3), as the configuration gave it.
	Endpoint string
}

// Open connects to the object storage url names (s3://BUCKET/PREFIX) with
// the credentials of the environment (getenv), endpoint (when not "")
// naming the server, through the ccm-s3 helper; machine names this
// machine (sanitized; "" for the host name). Close stops the helper.
func Open(url, endpoint, machine string, getenv func(string) string) (*Target, error) {
	loc, err := objstore.ParseURL(url)
	if err != nil {
		return nil, err
	}
	cfg, err := objstore.ConfigFromEnv(getenv, endpoint)
	if err != nil {
		return nil, err
	}
	helper, err := agent.Find()
	if err != nil {
		return nil, err
	}
	return &Target{Client: agent.New(helper, cfg), Loc: loc, Machine: MachineName(machine), Endpoint: cfg.Endpoint}, nil
}

// Close stops the helper processes.
func (t *Target) Close() error { return t.Client.Close() }

// MachineName is name made safe as one key segment ('-' for anything but
// letters, digits, '.', '_' and '-'); "" is the host name.
func MachineName(name string) string {
	if name == "" {
		name, _ = os.Hostname()
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), ".")
	if s == "" {
		return "unknown-host"
	}
	return s
}

// Check reaches the bucket once: the server, the credentials and the
// bucket are checked before any session is packed for it.
func (t *Target) Check(ctx context.Context) error {
	return t.Client.Probe(ctx, t.Loc.Bucket, t.Loc.Prefix)
}

// String is the target's URL.
func (t *Target) String() string { return t.Loc.String() }

// Keys of an archive and its manifest.
func (t *Target) archiveKey(machine, folder, id, sha string) string {
	return t.Loc.Key(machine, folder, id+"."+shortSum(sha)+archive.Ext)
}

func (t *Target) manifestKey(machine, folder, id string) string {
	return t.Loc.Key(machine, folder, id+archive.ManifestExt)
}

// shortSum is the part of an archive's SHA-256 its object's name carries.
func shortSum(sha string) string { return sha[:min(16, len(sha))] }

// named is the key of the archive that m, read at the manifest key of
// machine/folder/id, names; "" when m describes another session or
// folder, or gives no SHA-256 (64 lowercase hex digits): a manifest
// damaged or put there by something else names no archive of the session,
// so nothing is listed, kept or removed on its word.
func (t *Target) named(machine, folder, id string, m *archive.Manifest) string {
	if m.Session != id || m.Folder != folder || !isSHA256(m.ArchiveSHA256) {
		return ""
	}
	return t.archiveKey(machine, folder, id, m.ArchiveSHA256)
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ErrRedactedOver refuses a redacted bundle where the session's archive,
// not redacted, is: the bucket keeps the session as it was.
var ErrRedactedOver = errors.New("the session's archive there is not redacted, and a redacted bundle does not replace it (export it under another prefix)")

// Uploaded is what Upload did: what Commit completes, or Undo takes back.
type Uploaded struct {
	URL string // the archive's s3:// URL
	// Kept is true when a complete archive of the same files was there
	// already (an earlier export, or a run that was stopped before it
	// removed the originals): nothing was sent.
	Kept bool

	akey, mkey string
	existed    bool   // an object was at akey before (no manifest named it)
	prev       []byte // the manifest the upload replaced; nil: there was none
	prevKey    string // the archive prev named ("" when it could not be read)
}

// Upload puts a packed archive (file, with its manifest m, as
// sessions/archive's sidecar holds it: ArchiveBytes and ArchiveSHA256 set)
// under this machine's prefix: the archive is uploaded under a name of its
// own and confirmed by the server, then the manifest replaces the
// session's earlier one. When it returns nil both are complete. A complete
// archive of the same files already there is kept as it is. The archive
// the earlier manifest named stays until Commit, so that Undo can put
// that manifest back.
func (t *Target) Upload(ctx context.Context, file string, m *archive.Manifest) (*Uploaded, error) {
	if len(m.ArchiveSHA256) != 64 || m.ArchiveBytes <= 0 {
		return nil, errors.New("remote: the archive's manifest has no size or SHA-256")
	}
	akey := t.archiveKey(t.Machine, m.Folder, m.Session, m.ArchiveSHA256)
	mkey := t.manifestKey(t.Machine, m.Folder, m.Session)
	up := &Uploaded{URL: t.url(akey), akey: akey, mkey: mkey}
	bucket := t.Loc.Bucket
	data, err := t.Client.GetBytes(ctx, bucket, mkey, maxManifest)
	if err == nil {
		up.prev = data
		var old *archive.Manifest
		if old, err = archive.ParseManifest(data); err == nil {
			// Another session's manifest, or a damaged one, names no
			// archive here: it is replaced (Undo puts it back), and Commit
			// removes nothing for it.
			up.prevKey = t.named(t.Machine, m.Folder, m.Session, old)
			if up.prevKey != "" {
				info, herr := t.Client.Head(ctx, bucket, up.prevKey)
				if herr == nil && info.Size == old.ArchiveBytes && sameFiles(old, m) {
					up.Kept, up.URL = true, t.url(up.prevKey)
					return up, nil
				}
				if herr == nil && m.Redacted && !old.Redacted {
					// The session as it was is not replaced by a copy
					// with text blanked out: that would lose the text.
					return nil, fmt.Errorf("%s: %w", t.url(up.prevKey), ErrRedactedOver)
				}
			}
		}
	}
	if errors.Is(err, archive.ErrNewer) {
		return nil, fmt.Errorf("%s: %w", t.url(mkey), err) // a newer ccm's: not replaced
	}
	if err != nil && !objstore.IsNotFound(err) && !errors.Is(err, archive.ErrCorrupt) {
		return nil, err // the server: not replaced
	}
	if _, err := t.Client.Head(ctx, bucket, akey); err == nil {
		up.existed = true
	} else if !objstore.IsNotFound(err) {
		return nil, err
	}
	t.Client.AbortIncomplete(ctx, bucket, akey) // parts of a killed upload
	sum, err := hex.DecodeString(m.ArchiveSHA256)
	if err != nil {
		return nil, err
	}
	if err := t.Client.PutFile(ctx, bucket, akey, file, m.ArchiveBytes, sum); err != nil {
		return nil, err
	}
	side, err := marshalManifest(m)
	if err != nil {
		return nil, err
	}
	if err := t.Client.PutBytes(ctx, bucket, mkey, side); err != nil {
		return nil, err
	}
	return up, nil
}

// Commit completes an upload whose archive stays (its originals went, or
// it is an export): the archive the replaced manifest named is removed.
// Left behind (a run stopped before it), it is only bytes no listing
// shows.
func (t *Target) Commit(ctx context.Context, up *Uploaded) error {
	if up.Kept || up.prevKey == "" || up.prevKey == up.akey {
		return nil
	}
	return t.Client.Delete(ctx, t.Loc.Bucket, up.prevKey)
}

// Undo takes back an upload whose originals stay, leaving the bucket as
// it was before it: the manifest it replaced goes back (or, when there
// was none, its own goes), then the archive it added. A complete archive
// that was there already (Kept) is left as it is. Stopped between the
// two steps, it leaves an archive object no manifest names, which no
// listing shows.
func (t *Target) Undo(ctx context.Context, up *Uploaded) error {
	if up.Kept {
		return nil
	}
	bucket := t.Loc.Bucket
	var err error
	if up.prev != nil {
		err = t.Client.PutBytes(ctx, bucket, up.mkey, up.prev)
	} else {
		err = t.Client.Delete(ctx, bucket, up.mkey)
	}
	if err != nil || up.existed || up.akey == up.prevKey {
		return err
	}
	return t.Client.Delete(ctx, bucket, up.akey)
}

// sameFiles reports whether two manifests list the same files with the
// same content (the content and parts follow from the files, and a
// bundle's note says when it was made).
func sameFiles(a, b *archive.Manifest) bool {
	if a.Session != b.Session || a.Folder != b.Folder {
		return false
	}
	files := func(m *archive.Manifest) map[string]string {
		out := map[string]string{}
		for _, e := range m.Files {
			out[e.Path] = e.SHA256
		}
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) {
		return false
	}
	for p, sum := range fa {
		if fb[p] != sum {
			return false
		}
	}
	return true
}

// maxManifest bounds a manifest read from the bucket.
const maxManifest = 256 << 20

func (t *Target) readManifest(ctx context.Context, key string) (*archive.Manifest, error) {
	data, err := t.Client.GetBytes(ctx, t.Loc.Bucket, key, maxManifest)
	if err != nil {
		return nil, err
	}
	return archive.ParseManifest(data)
}

// Listed is one complete archive in the bucket.
type Listed struct {
	Machine  string
	Key      string // the archive's key
	URL      string
	Size     int64
	Manifest *archive.Manifest
	// Lite: Manifest is what the caller of ListKnown knew of the archive,
	// not read from the bucket; Complete reads it.
	Lite bool
}

// Known returns what a caller knows of the archive at url of size bytes,
// as its manifest gave it when the caller read it (the session, folder,
// project, creation time and size at least), or false.
type Known func(url string, size int64) (*archive.Manifest, bool)

// Listing is every machine's archives under the target's prefix.
type Listing struct {
	Archives []Listed
	// Incomplete are archive objects no valid manifest names (an upload
	// that was stopped, or a manifest that does not match): not archives.
	Incomplete []string
	// Newer are the manifests of a format newer than this ccm reads (a
	// newer ccm's archives): not listed, and refused by Refusal.
	Newer []Unread
}

// Unread is a session's manifest that could not be read.
type Unread struct {
	Session string
	Err     error // names the manifest's URL
}

// Refusal is why the archives of the session id names (whole, or a
// prefix) cannot be read, when a newer ccm made them; nil otherwise.
func (l *Listing) Refusal(id string) error {
	for _, u := range l.Newer {
		if strings.HasPrefix(u.Session, id) {
			return u.Err
		}
	}
	return nil
}

// List reads every machine's archives under the prefix: the objects, then
// each manifest (8 at a time).
func (t *Target) List(ctx context.Context) (*Listing, error) { return t.ListKnown(ctx, nil) }

// ListKnown is List that does not read the manifest of a session whose
// one archive object known knows: an archive object never changes (its
// name carries its SHA-256), and while a manifest names another archive of
// its session, that archive's object is there too. Its Listed is Lite.
func (t *Target) ListKnown(ctx context.Context, known Known) (*Listing, error) {
	prefix := t.Loc.Prefix
	if prefix != "" {
		prefix += "/"
	}
	objects := map[string]objstore.Info{}
	if err := t.Client.List(ctx, t.Loc.Bucket, prefix, func(i objstore.Info) error {
		objects[i.Key] = i
		return nil
	}); err != nil {
		return nil, err
	}
	type cand struct {
		machine, folder, id, key string
	}
	var cands []cand
	for key := range objects {
		machine, folder, id, ok := place(strings.TrimPrefix(key, prefix), archive.ManifestExt)
		if !ok {
			continue // not this layout, or an archive
		}
		cands = append(cands, cand{machine, folder, id, key})
	}
	// Each session's archive objects: one is the archive its manifest
	// names, unless an upload is under way or was stopped.
	only := map[string]string{} // machine/folder/id: its one archive object ("" for several)
	if known != nil {
		for key := range objects {
			machine, folder, id, ok := place(strings.TrimPrefix(key, prefix), archive.Ext)
			if !ok {
				continue
			}
			s := machine + "/" + folder + "/" + id
			if _, seen := only[s]; seen {
				only[s] = ""
			} else {
				only[s] = key
			}
		}
	}
	res := make([]*Listed, len(cands))
	errs := make([]error, len(cands))
	batch.Run(ctx, len(cands), 8, func(i int) {
		c := cands[i]
		if akey := only[c.machine+"/"+c.folder+"/"+c.id]; akey != "" {
			info := objects[akey]
			if m, ok := known(t.url(akey), info.Size); ok && m.Session == c.id && m.Folder == c.folder {
				res[i] = &Listed{Machine: c.machine, Key: akey, URL: t.url(akey), Size: info.Size, Manifest: m, Lite: true}
				return
			}
		}
		m, err := t.readManifest(ctx, c.key)
		if err != nil {
			errs[i] = err
			return
		}
		akey := t.named(c.machine, c.folder, c.id, m)
		info, ok := objects[akey]
		if akey == "" || !ok || m.ArchiveBytes != info.Size {
			errs[i] = errors.New("manifest does not match")
			return
		}
		res[i] = &Listed{Machine: c.machine, Key: akey, URL: t.url(akey), Size: info.Size, Manifest: m}
	}, nil)
	out := &Listing{}
	named := map[string]bool{}
	for i, r := range res {
		if r != nil {
			out.Archives = append(out.Archives, *r)
			named[r.Key] = true
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var oe *objstore.Error
		if errors.As(errs[i], &oe) && !objstore.IsNotFound(errs[i]) {
			return nil, errs[i] // the server, not the object
		}
		if c := cands[i]; errors.Is(errs[i], archive.ErrNewer) {
			out.Newer = append(out.Newer, Unread{Session: c.id, Err: fmt.Errorf("%s: %w", t.url(c.key), errs[i])})
		}
	}
	for key := range objects {
		if strings.HasSuffix(key, archive.Ext) && !named[key] {
			out.Incomplete = append(out.Incomplete, t.url(key))
		}
	}
	sort.Slice(out.Archives, func(i, j int) bool { return out.Archives[i].Key < out.Archives[j].Key })
	sort.Strings(out.Incomplete)
	sort.Slice(out.Newer, func(i, j int) bool { return out.Newer[i].Err.Error() < out.Newer[j].Err.Error() })
	return out, nil
}

// place reads a key relative to the prefix as <machine>/<folder>/<id>...ext
// (an archive's <id>.<sha>.tar.zst, a manifest's <id>.manifest.json);
// false when it is not one: another depth or suffix, or a machine, folder
// or session that is not one plain path element (a separator, "..", a
// hidden name), which ccm never writes and no path may be built from.
func place(rel, ext string) (machine, folder, id string, ok bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[2], ext) {
		return "", "", "", false
	}
	id, _, _ = strings.Cut(parts[2], ".")
	if ext == archive.ManifestExt {
		id = strings.TrimSuffix(parts[2], ext)
	}
	ok = archive.PlainName(parts[0]) && archive.PlainName(parts[1]) && archive.PlainName(id)
	return parts[0], parts[1], id, ok
}

// Complete reads the manifest of an archive ListKnown listed from what its
// caller knew, and checks that it names that archive still.
func (t *Target) Complete(ctx context.Context, l *Listed) error {
	if !l.Lite {
		return nil
	}
	m, err := t.readManifest(ctx, t.manifestKey(l.Machine, l.Manifest.Folder, l.Manifest.Session))
	if err != nil {
		return err
	}
	if t.named(l.Machine, l.Manifest.Folder, l.Manifest.Session, m) != l.Key || m.ArchiveBytes != l.Size {
		return fmt.Errorf("%s: its manifest names another archive now (the bucket changed: list it again)", l.URL)
	}
	l.Manifest, l.Lite = m, false
	return nil
}

// Fetch downloads an archive to dest, checks its size and SHA-256 (taken
// as the helper wrote it: the file is not read again) against its
// manifest, writes the manifest beside it as its sidecar (what
// archive.Verify, Extract and Read check it against) and makes both
// durable: an unarchive's recovery may need them after a power cut. The
// caller removes both. An archive that does not match is removed and
// refused.
func (t *Target) Fetch(ctx context.Context, l Listed, dest string) error {
	return t.fetch(ctx, l, dest, true)
}

// FetchTemp is Fetch for a download read once and removed (a search
// writing its index part): checked the same, not made durable.
func (t *Target) FetchTemp(ctx context.Context, l Listed, dest string) error {
	return t.fetch(ctx, l, dest, false)
}

func (t *Target) fetch(ctx context.Context, l Listed, dest string, durable bool) error {
	side := archive.SidecarPath(dest)
	fail := func(err error) error {
		os.Remove(dest)
		os.Remove(side)
		return err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(dest)); err != nil {
		return err
	}
	os.Remove(side) // never beside another archive
	got, err := t.Client.GetFile(ctx, t.Loc.Bucket, l.Key, dest)
	if err != nil {
		return fail(err)
	}
	if got.Size != l.Manifest.ArchiveBytes || got.SHA256 != l.Manifest.ArchiveSHA256 {
		return fail(fmt.Errorf("%s: %w: %d bytes downloaded, not the %d bytes of SHA-256 its manifest gives", l.URL, archive.ErrCorrupt, got.Size, l.Manifest.ArchiveBytes))
	}
	data, err := marshalManifest(l.Manifest)
	if err == nil {
		err = fsutil.WriteFileUnsynced(side, fsutil.FileMode, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	if err == nil && durable {
		err = fsutil.SyncFiles([]string{dest, side}, []string{filepath.Dir(dest)})
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// FetchAll downloads the archives of a listing as Fetch does, four at
// a time (the requests wait on the network, and as many helpers run),
// each to dest(i), and returns each one's error.
func (t *Target) FetchAll(ctx context.Context, picked []Listed, dest func(i int) string) []error {
	errs := make([]error, len(picked))
	batch.Run(ctx, len(picked), 4, func(i int) { errs[i] = t.Fetch(ctx, picked[i], dest(i)) }, nil)
	for i := range errs {
		if errs[i] == nil && ctx.Err() != nil {
			errs[i] = ctx.Err() // never fetched: the run was stopped
		}
	}
	return errs
}

// Remove deletes a session's archive: its manifest first, so it is never
// listed without its archive, then the archive it named.
func (t *Target) Remove(ctx context.Context, machine, folder, id string) error {
	mkey := t.manifestKey(machine, folder, id)
	m, err := t.readManifest(ctx, mkey)
	if objstore.IsNotFound(err) {
		return nil
	}
	if err := t.Client.Delete(ctx, t.Loc.Bucket, mkey); err != nil {
		return err
	}
	if m != nil {
		if akey := t.named(machine, folder, id, m); akey != "" {
			return t.Client.Delete(ctx, t.Loc.Bucket, akey)
		}
	}
	return nil
}

func (t *Target) url(key string) string { return objstore.Scheme + t.Loc.Bucket + "/" + key }

func marshalManifest(m *archive.Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	return append(data, '\n'), err
}
