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
	"encoding/json"
	"os"
	"strings"

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

// maxManifest bounds a manifest read from the bucket.
const maxManifest = 256 << 20

func (t *Target) readManifest(ctx context.Context, key string) (*archive.Manifest, error) {
	data, err := t.Client.GetBytes(ctx, t.Loc.Bucket, key, maxManifest)
	if err != nil {
		return nil, err
	}
	return archive.ParseManifest(data)
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
