// Writing an archive's members: each file of the session with its manifest
// entry, the keys of the stubs it holds, the search part, and the checks
// of where the files go back.

package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"ccm/internal/fsutil"
	"ccm/internal/tar"
	"ccm/sessions"

	"github.com/klauspost/compress/zstd"
)

// addFile writes one file into the tar stream, hashing it, and checks
// that it is still the file the scan saw and one of the session's paths.
// The bytes of transcripts and their backups (decompressed, for zstd
// ones) go through keys.
func addFile(tw *tar.Writer, configDir string, sc scope, f sessions.File, keys *keyFinder, buf []byte) (Entry, error) {
	rel, err := relTo(configDir, f.Path)
	if err != nil {
		return Entry{}, err
	}
	if _, err := sc.file(rel); err != nil {
		return Entry{}, err
	}
	r, err := fsutil.OpenRegular(f.Path)
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return Entry{}, err
	}
	if fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) {
		return Entry{}, fmt.Errorf("%s: %w", f.Path, ErrChanged)
	}
	e := Entry{Path: rel, Mode: fi.Mode().Perm(), MTime: fi.ModTime(), Size: fi.Size()}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: int64(e.Mode), Size: e.Size, ModTime: e.MTime, Format: tar.FormatPAX}); err != nil {
		return e, err
	}
	h := sha256.New()
	var w io.Writer = io.MultiWriter(tw, h)
	base := filepath.Base(f.Path)
	var scanned func()
	switch {
	case !strings.Contains(base, ".jsonl"):
	case strings.HasSuffix(base, ".zst"):
		var zw io.Writer
		zw, scanned = decompressTo(keys)
		w = io.MultiWriter(tw, h, zw)
	default:
		w = io.MultiWriter(tw, h, keys)
		scanned = keys.end
	}
	n, err := io.CopyBuffer(w, io.LimitReader(r, e.Size), buf)
	if scanned != nil {
		scanned()
	}
	if err != nil {
		return e, err
	}
	if n != e.Size {
		return e, fmt.Errorf("%s: %w (shrank)", f.Path, ErrChanged)
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return e, nil
}

// writePart writes one part and declares it in m.
func writePart(tw *tar.Writer, pd PartData, m *Manifest) error {
	name := PartPath(pd.Kind, pd.Name)
	if !PlainName(pd.Kind) || safeRel(name) != nil {
		return fmt.Errorf("part %q of kind %q: not a plain name", pd.Name, pd.Kind)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(pd.Data)), ModTime: m.Created, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := tw.Write(pd.Data); err != nil {
		return err
	}
	sum := sha256.Sum256(pd.Data)
	m.Parts = append(m.Parts, Part{Kind: pd.Kind, Path: name, Format: pd.Format, Size: int64(len(pd.Data)), SHA256: hex.EncodeToString(sum[:])})
	return nil
}

// decompressTo returns a writer that decompresses a zstd stream into
// keys, and the function that ends it. A stream it cannot decompress
// is read to its end and scanned no further.
func decompressTo(keys *keyFinder) (io.Writer, func()) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		dec := decoders.Get().(*zstd.Decoder)
		defer func() { dec.Reset(nil); decoders.Put(dec) }()
		if dec.Reset(pr) == nil {
			io.Copy(keys, dec)
		}
		io.Copy(io.Discard, pr)
	}()
	return pw, func() {
		pw.Close()
		<-done
		keys.end()
	}
}

func relTo(base, path string) (string, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", path, base)
	}
	return filepath.ToSlash(rel), nil
}

// writableParents refuses a session whose folders are read-only before
// anything is written: its originals could not be removed.
func writableParents(files []sessions.File) error {
	seen := map[string]bool{}
	for _, f := range files {
		d := filepath.Dir(f.Path)
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := fsutil.CanWrite(d); err != nil {
			return fmt.Errorf("%s: folder is not writable (%v); nothing archived", d, err)
		}
	}
	return nil
}
