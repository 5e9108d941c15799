// Package remote keeps session archives and exported bundles in
// S3-compatible object storage, for a team or a fleet: one bucket, each
// machine under its own prefix, every machine's archives in one listing.
//
// Layout under s3://BUCKET/PREFIX:
//
//	<machine>/<project folder>/<session>.tar.zst        the archive (internal/archive's format)
//	<machine>/<project folder>/<session>.manifest.json  its manifest, with the archive's size and SHA-256
//
// The manifest is written last and is the commit marker: an archive counts
// only when its manifest is there, names the same machine, folder and
// session as its key, and gives the size the archive object has. An upload
// killed at any point leaves either the previous complete pair, or an
// archive object with no manifest, which no listing shows and the next
// upload replaces. Replacing an archive removes its manifest first.
//
// Every upload is checked by the server against the SHA-256 it is signed
// with (see internal/objstore); every download is checked against the
// manifest's SHA-256 before anything is read from it.
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"ccm/internal/archive"
	"ccm/internal/bundle"
	"ccm/internal/objstore"
)

// Target is a place in object storage that holds archives: a bucket and
// prefix, and the name this machine writes under.
type Target struct {
	Client  *objstore.Client
	Loc     objstore.Location
	Machine string
}

// Open connects to the object storage url names (s3://BUCKET/PREFIX) with
// the credentials of the environment (getenv), endpoint (when not "")
// naming the server; machine names this machine (sanitized; "" for the
// host name).
func Open(url, endpoint, machine string, getenv func(string) string) (*Target, error) {
	loc, err := objstore.ParseURL(url)
	if err != nil {
		return nil, err
	}
	cfg, err := objstore.ConfigFromEnv(getenv, endpoint)
	if err != nil {
		return nil, err
	}
	c, err := objstore.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Target{Client: c, Loc: loc, Machine: MachineName(machine)}, nil
}

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
func (t *Target) archiveKey(machine, folder, id string) string {
	return t.Loc.Key(machine, folder, id+archive.Ext)
}

func manifestKey(archiveKey string) string {
	return strings.TrimSuffix(archiveKey, archive.Ext) + archive.ManifestExt
}

// Uploaded is what Upload did.
type Uploaded struct {
	URL string // the archive's s3:// URL
	// Kept is true when a complete archive of the same files was there
	// already (an earlier run that was stopped before it removed the
	// originals): nothing was sent.
	Kept bool
}

// Upload puts a packed archive (file, with its manifest m, as
// internal/archive's sidecar holds it: ArchiveBytes and ArchiveSHA256 set)
// under this machine's prefix: an existing manifest is removed, the
// archive uploaded and confirmed by the server, then the manifest; when
// it returns nil both are complete. A complete archive of the same files
// already there is kept as it is.
func (t *Target) Upload(ctx context.Context, file string, m *archive.Manifest) (*Uploaded, error) {
	if m.ArchiveSHA256 == "" || m.ArchiveBytes <= 0 {
		return nil, errors.New("remote: the archive's manifest has no size or SHA-256")
	}
	akey := t.archiveKey(t.Machine, m.Folder, m.Session)
	mkey := manifestKey(akey)
	out := &Uploaded{URL: t.url(akey)}
	bucket := t.Loc.Bucket
	if old, err := t.readManifest(ctx, mkey); err == nil {
		if info, herr := t.Client.Head(ctx, bucket, akey); herr == nil && info.Size == old.ArchiveBytes && sameFiles(old, m) {
			out.Kept = true
			return out, nil
		}
		if err := t.Client.Delete(ctx, bucket, mkey); err != nil {
			return nil, err
		}
	} else if !objstore.IsNotFound(err) && !errors.Is(err, archive.ErrCorrupt) && !isNotManifest(err) {
		return nil, err
	}
	t.Client.AbortIncomplete(ctx, bucket, akey) // parts of a killed upload
	sum, err := hex.DecodeString(m.ArchiveSHA256)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != m.ArchiveBytes {
		return nil, fmt.Errorf("%s: %d bytes, its manifest says %d", file, fi.Size(), m.ArchiveBytes)
	}
	if err := t.Client.Put(ctx, bucket, akey, f, fi.Size(), sum); err != nil {
		return nil, err
	}
	side, err := marshalManifest(m)
	if err != nil {
		return nil, err
	}
	if err := t.Client.PutBytes(ctx, bucket, mkey, side); err != nil {
		return nil, err
	}
	return out, nil
}

func isNotManifest(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not a "+archive.Format)
}

// sameFiles reports whether two manifests list the same files with the
// same content, the bundle's note aside (it says when it was made).
func sameFiles(a, b *archive.Manifest) bool {
	if a.Session != b.Session || a.Folder != b.Folder {
		return false
	}
	files := func(m *archive.Manifest) map[string]string {
		out := map[string]string{}
		for _, e := range m.Files {
			if e.Path != bundle.NotePath {
				out[e.Path] = e.SHA256
			}
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
}

// Listing is every machine's archives under the target's prefix.
type Listing struct {
	Archives []Listed
	// Incomplete are archive objects without a valid manifest (an upload
	// that was stopped, or a manifest that does not match): not archives.
	Incomplete []string
}

// List reads every machine's archives under the prefix: the objects, then
// each manifest (8 at a time).
func (t *Target) List(ctx context.Context) (*Listing, error) {
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
		machine, folder, id string
		info                objstore.Info
	}
	var cands []cand
	out := &Listing{}
	for key, info := range objects {
		if !strings.HasSuffix(key, archive.Ext) {
			continue
		}
		rel := strings.TrimPrefix(key, prefix)
		parts := strings.Split(rel, "/")
		if len(parts) != 3 {
			continue // not this layout
		}
		if _, ok := objects[manifestKey(key)]; !ok {
			out.Incomplete = append(out.Incomplete, t.url(key))
			continue
		}
		cands = append(cands, cand{parts[0], parts[1], strings.TrimSuffix(parts[2], archive.Ext), info})
	}
	res := make([]*Listed, len(cands))
	errs := make([]error, len(cands))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			m, err := t.readManifest(ctx, manifestKey(c.info.Key))
			switch {
			case err != nil:
				errs[i] = err
			case m.Session != c.id || m.Folder != c.folder || m.ArchiveBytes != c.info.Size:
				errs[i] = errors.New("manifest does not match")
			default:
				res[i] = &Listed{Machine: c.machine, Key: c.info.Key, URL: t.url(c.info.Key), Size: c.info.Size, Manifest: m}
			}
		}()
	}
	wg.Wait()
	for i, r := range res {
		if r != nil {
			out.Archives = append(out.Archives, *r)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var oe *objstore.Error
		if errors.As(errs[i], &oe) && !objstore.IsNotFound(errs[i]) {
			return nil, errs[i] // the server, not the object
		}
		out.Incomplete = append(out.Incomplete, t.url(cands[i].info.Key))
	}
	sort.Slice(out.Archives, func(i, j int) bool { return out.Archives[i].Key < out.Archives[j].Key })
	sort.Strings(out.Incomplete)
	return out, nil
}

// Open streams an archive; the reader's last Read fails unless the bytes
// have the size and SHA-256 of its manifest.
func (t *Target) Open(ctx context.Context, l Listed) (io.ReadCloser, error) {
	rc, _, err := t.Client.Get(ctx, t.Loc.Bucket, l.Key)
	if err != nil {
		return nil, err
	}
	return &checked{r: rc, h: sha256.New(), want: l.Manifest.ArchiveSHA256, size: l.Manifest.ArchiveBytes, url: l.URL}, nil
}

type checked struct {
	r    io.ReadCloser
	h    hash.Hash
	n    int64
	want string
	size int64
	url  string
}

func (c *checked) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if err == io.EOF && (c.n != c.size || hex.EncodeToString(c.h.Sum(nil)) != c.want) {
		return n, fmt.Errorf("%s: %w: %d bytes downloaded, not the %d bytes of SHA-256 its manifest gives", c.url, archive.ErrCorrupt, c.n, c.size)
	}
	return n, err
}

func (c *checked) Close() error { return c.r.Close() }

// Fetch downloads an archive into dir, checked against its manifest, and
// writes the manifest beside it as its sidecar (what archive.Verify
// reads). It returns the archive's path; the caller removes both.
func (t *Target) Fetch(ctx context.Context, l Listed, dir string) (string, error) {
	rc, err := t.Open(ctx, l)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	f, err := os.CreateTemp(dir, "fetch-*"+archive.Ext)
	if err != nil {
		return "", err
	}
	p := f.Name()
	_, err = io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var side []byte
		if side, err = marshalManifest(l.Manifest); err == nil {
			err = os.WriteFile(archive.SidecarPath(p), side, 0o600)
		}
	}
	if err != nil {
		os.Remove(p)
		os.Remove(archive.SidecarPath(p))
		return "", err
	}
	return p, nil
}

// Remove deletes an archive: its manifest first, so it is never listed
// without its archive.
func (t *Target) Remove(ctx context.Context, machine, folder, id string) error {
	akey := t.archiveKey(machine, folder, id)
	if err := t.Client.Delete(ctx, t.Loc.Bucket, manifestKey(akey)); err != nil {
		return err
	}
	return t.Client.Delete(ctx, t.Loc.Bucket, akey)
}

func (t *Target) url(key string) string { return objstore.Scheme + t.Loc.Bucket + "/" + key }

func marshalManifest(m *archive.Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	return append(data, '\n'), err
}
