package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ccm/ccm"
)

// ErrForeign means an archive names a path that is not its session's: it
// is refused whatever the rest of it holds.
var ErrForeign = errors.New("not a file of the archived session")

// scope is what an archive of one session may bring back: the paths of
// that session, and nothing else, whatever its manifest lists.
//
//	projects/<folder>/<id>.jsonl              the transcript
//	projects/<folder>/<id>.jsonl.backup.*     its purge backups
//	projects/<folder>/<id>/...                its subagents, tool results (files and folders)
//	projects/<folder>/agent-*.jsonl           flat agent files of older versions, whose
//	                                          records name the session (checked on unarchive)
//	file-history/<id>/...                     its file history (files and folders)
//	todos/<id>-*.json                         its todos
//	debug/<id>.txt                            its debug log
//
// store/<hex> members are content for the CCM store (never written into
// the config dir), parts/<kind>/... members are declared parts, and
// MANIFEST.json is the manifest.
type scope struct {
	folder, id string
}

// kind of a session file, as the scope places it.
type fileKind int

const (
	kindTranscript fileKind = iota
	kindBackup
	kindCompanion
	kindLegacyAgent
	kindFileHistory
	kindTodo
	kindDebug
)

// newScope checks the session id and project folder an archive is for:
// each must be one plain path element.
func newScope(folder, id string) (scope, error) {
	for _, name := range []string{folder, id} {
		if !PlainName(name) {
			return scope{}, fmt.Errorf("%w: session %q in project folder %q is not a plain name", ErrForeign, id, folder)
		}
	}
	return scope{folder: folder, id: id}, nil
}

// scopeOf is the scope of the archive at path: <root>/<folder>/<id>.tar.zst.
func scopeOf(path string) (scope, error) {
	return newScope(filepath.Base(filepath.Dir(path)), strings.TrimSuffix(filepath.Base(path), Ext))
}

// PlainName is a path element that names nothing else: not empty, not
// hidden, not . or .., no separator, no NUL.
func PlainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.HasPrefix(s, ".") && !strings.ContainsAny(s, "/\\\x00")
}

// file classifies a file member's path, or refuses it.
func (s scope) file(p string) (fileKind, error) {
	if err := safeRel(p); err != nil {
		return 0, err
	}
	proj := "projects/" + s.folder + "/"
	switch {
	case p == proj+s.id+".jsonl":
		return kindTranscript, nil
	case strings.HasPrefix(p, proj+s.id+".jsonl.backup.") && !strings.Contains(p[len(proj):], "/"):
		return kindBackup, nil
	case strings.HasPrefix(p, proj+s.id+"/"):
		return kindCompanion, nil
	case strings.HasPrefix(p, proj+"agent-") && strings.HasSuffix(p, ".jsonl") && !strings.Contains(p[len(proj):], "/"):
		return kindLegacyAgent, nil
	case strings.HasPrefix(p, "file-history/"+s.id+"/"):
		return kindFileHistory, nil
	case strings.HasPrefix(p, "todos/"+s.id+"-") && strings.HasSuffix(p, ".json") && strings.Count(p, "/") == 1:
		return kindTodo, nil
	case p == "debug/"+s.id+".txt":
		return kindDebug, nil
	}
	return 0, fmt.Errorf("%w %s: %q", ErrForeign, s.id, p)
}

// dir checks a folder entry: only the session's own folders.
func (s scope) dir(p string) error {
	if err := safeRel(p); err != nil {
		return err
	}
	for _, root := range []string{"projects/" + s.folder + "/" + s.id, "file-history/" + s.id} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return nil
		}
	}
	return fmt.Errorf("%w %s: folder %q", ErrForeign, s.id, p)
}

// ownRoot is the folder above p (a path file or dir accepted) that the
// session does not own: projects/<folder>, file-history, todos or debug. A
// user may have made it a symlink; everything below it must be real.
func (s scope) ownRoot(p string) string {
	if strings.HasPrefix(p, "projects/") {
		return "projects/" + s.folder
	}
	return p[:strings.Index(p, "/")]
}

// checkDest checks where a member would go under configDir: no folder
// below the session's own root may be a symlink or anything but a folder,
// and an existing file there must be a regular file. It returns the
// destination path.
func (s scope) checkDest(configDir, p string) (string, error) {
	root := s.ownRoot(p)
	rest := strings.TrimPrefix(p, root+"/")
	cur := filepath.Join(configDir, filepath.FromSlash(root))
	parts := strings.Split(rest, "/")
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(configDir, filepath.FromSlash(p)), nil
		}
		if err != nil {
			return "", err
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf("%s: %w: it is a symlink, which unarchive does not follow", cur, ErrForeign)
		case !last && !fi.IsDir():
			return "", fmt.Errorf("%s: %w: it is not a folder", cur, ErrForeign)
		case last && !fi.IsDir() && !fi.Mode().IsRegular():
			return "", fmt.Errorf("%s: %w: it is not a regular file", cur, ErrForeign)
		}
	}
	return cur, nil
}

// checkManifest applies the scope to everything a manifest lists: every
// file and folder path, every content key (valid, listed once), every
// part (under parts/<its kind>/).
func (s scope) checkManifest(m *Manifest) error {
	if m.Session != s.id || m.Folder != s.folder {
		return fmt.Errorf("%w: the manifest is of session %q in %q, the archive's name says %q in %q",
			ErrForeign, m.Session, m.Folder, s.id, s.folder)
	}
	seen := map[string]bool{ManifestName: true}
	add := func(p string) error {
		if seen[p] {
			return fmt.Errorf("%w: %s listed twice", ErrCorrupt, p)
		}
		seen[p] = true
		return nil
	}
	for _, e := range m.Files {
		if _, err := s.file(e.Path); err != nil {
			return err
		}
		if err := add(e.Path); err != nil {
			return err
		}
	}
	for _, d := range m.Dirs {
		if err := s.dir(d.Path); err != nil {
			return err
		}
	}
	for _, c := range m.Content {
		k, err := ccm.ParseKey(c.Key)
		if err != nil {
			return fmt.Errorf("%w: content: %v", ErrCorrupt, err)
		}
		if c.Size < 0 || len(c.SHA256) != 64 {
			return fmt.Errorf("%w: content %s: bad size or hash", ErrCorrupt, k)
		}
		if err := add(ContentPath(k)); err != nil {
			return err
		}
	}
	for _, pt := range m.Parts {
		if !PlainName(pt.Kind) || !strings.HasPrefix(pt.Path, "parts/"+pt.Kind+"/") || safeRel(pt.Path) != nil || len(pt.SHA256) != 64 {
			return fmt.Errorf("%w: part %q of kind %q", ErrForeign, pt.Path, pt.Kind)
		}
		if err := add(pt.Path); err != nil {
			return err
		}
	}
	return nil
}

// mayCreate reports whether unarchive may create (and, undoing, remove
// when empty) the folder rel: one of the session's own folders, or a
// folder above its files (projects, projects/<folder>, file-history,
// todos, debug).
func (s scope) mayCreate(rel string) bool {
	switch rel {
	case "projects", "projects/" + s.folder, "file-history", "todos", "debug":
		return true
	}
	return s.dir(rel) == nil
}
