package archive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/tar"
)

// Reading an archive for a caller that puts its session somewhere else
// than where it was (an import to another project path, maybe under
// another id): the members are checked exactly as unarchive checks them,
// the content goes into the store the same way, and the caller places the
// files it is handed.

// PeekManifest returns the manifest to read the archive at path against:
// its sidecar when that gives the archive's own size and SHA-256 (hashed
// here), else the manifest inside, found by decompressing the stream
// without checking the members (Read checks each against it). Its format
// must be one this version reads, and everything it lists must be of the
// session and project folder it names: the archive's file name need not
// name them (a bundle's).
func PeekManifest(path string) (*Manifest, error) {
	m, err := peekManifest(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := newScope(m.Folder, m.Session)
	if err == nil {
		err = sc.checkManifest(m)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func peekManifest(path string) (*Manifest, error) {
	if side, err := ReadSidecar(SidecarPath(path)); err == nil {
		if n, sum, err := fsutil.FileSHA256(path); err == nil && n == side.ArchiveBytes && sum == side.ArchiveSHA256 {
			return side, nil
		}
	}
	f, err := fsutil.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := decoders.Get().(*zstd.Decoder)
	defer func() { dec.Reset(nil); decoders.Put(dec) }()
	if err := dec.Reset(bufio.NewReaderSize(f, 1<<20)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	tr := tar.NewReader(dec)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no %s (truncated?)", ErrCorrupt, ManifestName)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if h.Name != ManifestName {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxManifest))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return ParseManifest(data)
	}
}

// ReadOptions of Read.
type ReadOptions struct {
	// Store receives the archive's content, durable and read back before
	// Read returns, and is asked which stubs stay stubs; nil: no store.
	Store *ccm.Store
	// DryRun checks the content without storing it.
	DryRun bool
	// AllowMissingContent reads an archive whose content is missing or
	// corrupt: the session's files must be intact; the stubs whose content
	// is lost stay stubs, and ReadResult names them.
	AllowMissingContent bool
	// File receives each file of the session as it is read; Part each
	// declared part. Either's error stops the read. A member is known good
	// only when Read returns nil: the caller discards what it made of a
	// read that fails.
	File func(e Entry, r io.Reader) error
	Part func(p Part, r io.Reader) error
}

// ReadResult is what Read found.
type ReadResult struct {
	// Carried is how many content members the archive has; New how many
	// of them the store did not have before.
	Carried, New int
	// StaysStub are the keys of the session's stubs whose content is in
	// neither the archive nor the store; BadContent the content members
	// found missing or corrupt (only with AllowMissingContent).
	StaysStub  []string
	BadContent []string
}

// Read reads the whole archive at path, every member checked against m
// (from PeekManifest) and against the scope of m's session, as unarchive
// reads an archive (readInto): files and parts are handed to the caller,
// the content goes into the store.
func Read(ctx context.Context, path string, m *Manifest, o ReadOptions) (*ReadResult, error) {
	sc, err := newScope(m.Folder, m.Session)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res := &ReadResult{Carried: len(m.Content)}
	for _, c := range m.Content {
		if o.Store == nil {
			res.New++
		} else if _, err := o.Store.Stat(ccm.Key(c.Key)); err != nil {
			res.New++
		}
	}
	f, err := fsutil.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st := o.Store
	if o.DryRun {
		st = nil
	}
	w := walk{scope: sc, want: m, lenient: o.AllowMissingContent, file: o.File, part: o.Part}
	if w.file == nil {
		w.file = func(Entry, io.Reader) error { return nil }
	}
	rd, err := readInto(ctx, bufio.NewReaderSize(f, 1<<20), w, st, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for k := range rd.walked.bad {
		res.BadContent = append(res.BadContent, k)
	}
	sort.Strings(res.BadContent)
	stays := staysStub(o.Store, rd.stubs, m, rd.walked.bad)
	if o.DryRun {
		// Content the archive carries would be stored.
		carried := map[string]bool{}
		for _, c := range m.Content {
			carried[c.Key] = !rd.walked.bad[c.Key]
		}
		for _, k := range stays {
			if !carried[k] {
				res.StaysStub = append(res.StaysStub, k)
			}
		}
	} else {
		res.StaysStub = stays
	}
	return res, nil
}

// CheckPlace checks the place of rel, a file (or with dir a folder) of
// session id in project folder, under configDir, as unarchive checks the
// places of its files: rel must be one of the session's own paths, no
// folder below the session's own root may be a symlink or anything but a
// folder, and what is there must be a regular file (or a folder). It
// returns the place.
func CheckPlace(configDir, folder, id, rel string, dir bool) (string, error) {
	sc, err := newScope(folder, id)
	if err != nil {
		return "", err
	}
	if dir {
		err = sc.dir(rel)
	} else {
		_, err = sc.file(rel)
	}
	if err != nil {
		return "", err
	}
	dest, err := sc.checkDest(configDir, rel)
	if err != nil {
		return "", err
	}
	if fi, err := os.Lstat(dest); err == nil && fi.IsDir() != dir {
		return "", fmt.Errorf("%s: %w: it is not a %s", dest, ErrForeign, map[bool]string{true: "folder", false: "file"}[dir])
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return dest, nil
}
