package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/tar"
)

// maxManifest bounds the manifest member read into memory.
const maxManifest = 256 << 20

// walk says how walkArchive reads an archive.
type walk struct {
	scope scope
	// want is the manifest every member is checked against as it is read
	// (the sidecar, or the inner manifest a first read returned); nil:
	// members are checked against the inner manifest at the end.
	want *Manifest
	// lenient accepts content and parts that are missing, corrupt or cut
	// off, as long as every file of the session is there and good; it
	// needs want.
	lenient bool
	// skip are content keys not to hand to content (found bad before).
	skip map[string]bool
	// file, if set, receives each file member as it is read; content each
	// content member, part each listed part. An error from any stops the
	// walk, except that errBadContent from content marks the content bad
	// when lenient.
	file    func(e Entry, r io.Reader) error
	content func(c Content, r io.Reader) error
	part    func(p Part, r io.Reader) error
}

// walked is what walkArchive found.
type walked struct {
	inner *Manifest
	// bad are the listed content keys (and part paths) that were missing
	// or corrupt; only a lenient walk returns with any.
	bad map[string]bool
}

// errBadContent is what a content callback returns for content that does
// not match its key.
var errBadContent = fmt.Errorf("%w: content does not match its key", ErrCorrupt)

// member is a listed member: what its bytes must hash to.
type member struct {
	size   int64
	sha256 string
	key    ccm.Key // content members
	entry  *Entry  // file members
	cont   *Content
	part   *Part // part members
}

// listing indexes a manifest's members by name.
func listing(m *Manifest) map[string]member {
	out := make(map[string]member, len(m.Files)+len(m.Content)+len(m.Parts))
	for i := range m.Files {
		e := &m.Files[i]
		out[e.Path] = member{size: e.Size, sha256: e.SHA256, entry: e}
	}
	for i := range m.Content {
		c := &m.Content[i]
		k := ccm.Key(c.Key)
		out[ContentPath(k)] = member{size: c.Size, sha256: c.SHA256, key: k, cont: c}
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		out[p.Path] = member{size: p.Size, sha256: p.SHA256, part: p}
	}
	return out
}

// walkArchive reads a whole archive. Every member must be of the
// session's scope, listed (in w.want as it is read, and in the inner
// manifest at the end) and match its size and SHA-256 (content also its
// key); the inner manifest must list exactly the members found and agree
// with w.want.
func walkArchive(r io.Reader, w walk) (*walked, error) {
	if w.want != nil {
		if err := w.scope.checkManifest(w.want); err != nil {
			return nil, err
		}
	}
	dec := decoders.Get().(*zstd.Decoder)
	if err := dec.Reset(r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer func() { dec.Reset(nil); decoders.Put(dec) }()
	tr := tar.NewReader(dec)
	var wanted map[string]member
	if w.want != nil {
		wanted = listing(w.want)
	}
	found := map[string]member{} // name -> size and hash read
	res := &walked{bad: map[string]bool{}}
	buf := getBuffer()
	defer putBuffer(buf)
	filesLeft := -1
	if w.want != nil {
		filesLeft = len(w.want.Files)
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if w.lenient && filesLeft == 0 {
				break // cut off after the session's files: content is lost
			}
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		name := h.Name
		switch h.Typeflag {
		case tar.TypeDir:
			if err := w.scope.dir(strings.TrimRight(name, "/")); err != nil {
				return nil, err
			}
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: member %q is of type %q (only files and folders are read)", ErrForeign, name, h.Typeflag)
		}
		if _, dup := found[name]; dup || res.inner != nil && name == ManifestName {
			return nil, fmt.Errorf("%w: %s appears twice", ErrCorrupt, name)
		}
		if name == ManifestName {
			if res.inner, err = readManifest(tr, w.scope); err != nil {
				return nil, err
			}
			continue
		}
		var m member
		isPart := false
		switch {
		case strings.HasPrefix(name, ContentDir):
			k, ok := ccm.KeyFromHex(name[len(ContentDir):])
			if !ok {
				return nil, fmt.Errorf("%w: %q is not a store key", ErrForeign, name)
			}
			m.key = k
		case strings.HasPrefix(name, PartsDir):
			isPart = true
		default:
			if _, err := w.scope.file(name); err != nil {
				return nil, err
			}
		}
		lm, listed := wanted[name]
		if w.want != nil && !listed {
			return nil, fmt.Errorf("%w: %s is not in the manifest", ErrForeign, name)
		}
		var sink func(io.Reader) error
		switch {
		case m.key != "" && w.content != nil && listed && !w.skip[string(m.key)]:
			sink = func(r io.Reader) error { return w.content(*lm.cont, r) }
		case isPart && w.part != nil && listed:
			sink = func(r io.Reader) error { return w.part(*lm.part, r) }
		case m.key == "" && !isPart && w.file != nil:
			e := Entry{Path: name, Mode: fs.FileMode(h.Mode).Perm(), MTime: h.ModTime, Size: h.Size}
			if listed {
				e = *lm.entry
			}
			sink = func(r io.Reader) error { return w.file(e, r) }
		}
		var kh hash.Hash // a b2s key's hash; a sha256 key is the SHA-256 read anyway
		if m.key.IsLegacy() {
			kh = m.key.NewHash()
		}
		n, sum, err := readMember(tr, buf, kh, sink)
		if errors.Is(err, errBadContent) && w.lenient {
			res.bad[string(m.key)] = true
			found[name] = member{size: -1}
			continue
		}
		if err != nil {
			if w.lenient && (m.key != "" || isPart) && errors.Is(err, ErrCorrupt) {
				res.bad[badName(name, m.key)] = true
				found[name] = member{size: -1}
				continue
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if m.key != "" && (kh != nil && !m.key.Matches(kh.Sum(nil)) || kh == nil && sum != m.key.Hex()) {
			if w.lenient {
				res.bad[string(m.key)] = true
				found[name] = member{size: -1}
				continue
			}
			return nil, fmt.Errorf("%w: %s does not hold the content of key %s", ErrCorrupt, name, m.key)
		}
		found[name] = member{size: n, sha256: sum}
		if listed && (lm.size != n || lm.sha256 != sum) {
			if w.lenient && (m.key != "" || isPart) {
				res.bad[badName(name, m.key)] = true
				continue
			}
			return nil, fmt.Errorf("%w: %s does not match what was archived", ErrCorrupt, name)
		}
		if listed && lm.entry != nil {
			filesLeft--
		}
	}
	return res, w.finish(res, found)
}

func badName(name string, k ccm.Key) string {
	if k != "" {
		return string(k)
	}
	return name
}

// finish checks that the manifests list exactly the members found.
func (w walk) finish(res *walked, found map[string]member) error {
	inner := res.inner
	if inner == nil && !w.lenient {
		return fmt.Errorf("%w: no %s (truncated?)", ErrCorrupt, ManifestName)
	}
	if inner == nil && w.want == nil {
		return fmt.Errorf("%w: no %s and no sidecar manifest", ErrCorrupt, ManifestName)
	}
	for _, m := range []*Manifest{w.want, inner} {
		if m == nil {
			continue
		}
		list := listing(m)
		for name, lm := range list {
			got, ok := found[name]
			switch {
			case ok && got.size == -1: // bad, noted already
			case ok && got.size == lm.size && got.sha256 == lm.sha256:
			case w.lenient && lm.entry == nil:
				res.bad[badName(name, lm.key)] = true
			default:
				return fmt.Errorf("%w: %s is missing or does not match its manifest", ErrCorrupt, name)
			}
		}
		for name := range found {
			if _, ok := list[name]; !ok {
				return fmt.Errorf("%w: %s is not in the manifest", ErrForeign, name)
			}
		}
	}
	if w.want != nil && inner != nil && !sameLists(w.want, inner) {
		return fmt.Errorf("%w: the sidecar manifest and the archive's own differ", ErrCorrupt)
	}
	return nil
}

// sameLists reports whether two manifests list the same members.
func sameLists(a, b *Manifest) bool {
	la, lb := listing(a), listing(b)
	if len(la) != len(lb) || len(a.Dirs) != len(b.Dirs) {
		return false
	}
	for name, m := range la {
		if n, ok := lb[name]; !ok || n.size != m.size || n.sha256 != m.sha256 {
			return false
		}
	}
	for i := range a.Dirs {
		if a.Dirs[i].Path != b.Dirs[i].Path {
			return false
		}
	}
	return true
}

// readManifest reads the inner manifest and applies the scope to it.
func readManifest(r io.Reader, s scope) (*Manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifest))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	m := &Manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: bad manifest", ErrCorrupt)
	}
	if err := knownFormat(m.Format); err != nil {
		return nil, err
	}
	if err := s.checkManifest(m); err != nil {
		return nil, err
	}
	return m, nil
}

// readMember reads one member to its end, hashing it with SHA-256 (and
// kh, when not nil), and hands it to sink when there is one.
func readMember(tr io.Reader, buf []byte, kh hash.Hash, sink func(io.Reader) error) (int64, string, error) {
	hs := sha256.New()
	var w io.Writer = hs
	if kh != nil {
		w = io.MultiWriter(hs, kh)
	}
	if sink == nil {
		n, err := io.CopyBuffer(w, tr, buf)
		if err != nil {
			return n, "", fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return n, hex.EncodeToString(hs.Sum(nil)), nil
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := sink(pr)
		if err == nil {
			// A sink that stops early still lets the member be read whole.
			_, err = io.Copy(io.Discard, pr)
		}
		pr.CloseWithError(err)
		done <- err
	}()
	n, cerr := io.CopyBuffer(io.MultiWriter(w, pw), tr, buf)
	pw.CloseWithError(cerr)
	if serr := <-done; serr != nil {
		if cerr != nil {
			return n, "", fmt.Errorf("%w: %v", ErrCorrupt, cerr)
		}
		return n, "", serr
	}
	if cerr != nil {
		return n, "", fmt.Errorf("%w: %v", ErrCorrupt, cerr)
	}
	return n, hex.EncodeToString(hs.Sum(nil)), nil
}

// Verify reads a whole archive and checks it: every member against the
// manifest inside and the sidecar (when there is one), the archive's size
// and SHA-256 against its sidecar, and every path against the session's
// scope.
func Verify(path string) (*Manifest, error) {
	m, _, err := verify(path, false)
	return m, err
}

// verify is Verify, lenient or not: a lenient verify accepts an archive
// whose content part is missing, corrupt or cut off (its archive hash
// cannot match then) and returns the bad content keys; it needs the
// sidecar.
func verify(path string, lenient bool) (*Manifest, map[string]bool, error) {
	sc, err := scopeOf(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := fsutil.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	side, serr := ReadSidecar(SidecarPath(path))
	if serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return nil, nil, serr
	}
	if side == nil && lenient {
		return nil, nil, fmt.Errorf("%s: no sidecar manifest: an archive whose content is damaged needs it", path)
	}
	sum := sha256.New()
	cr := &countReader{r: io.TeeReader(f, sum)}
	res, err := walkArchive(cr, walk{scope: sc, want: side, lenient: lenient})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	// Read what the decoder left (trailing garbage counts too).
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return nil, nil, err
	}
	m := res.inner
	if side != nil {
		if !lenient && (side.ArchiveBytes != cr.n || side.ArchiveSHA256 != hex.EncodeToString(sum.Sum(nil))) {
			return nil, nil, fmt.Errorf("%s: %w: its size or SHA-256 differs from its manifest", path, ErrCorrupt)
		}
		if m == nil {
			m = side
		}
		m.ArchiveBytes, m.ArchiveSHA256 = side.ArchiveBytes, side.ArchiveSHA256
	}
	return m, res.bad, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
