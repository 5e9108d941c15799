package sessions

import (
	"os"
	"path/filepath"
	"strings"

	"ccm/ccm"
	"ccm/transcript"
)

// Home is where ccm keeps its own state: $CCM_HOME, else <config dir>/ccm.
func Home(configDir string) string {
	if h := os.Getenv("CCM_HOME"); h != "" {
		return h
	}
	return filepath.Join(configDir, "ccm")
}

// StoreDir is the CCM store's directory: cacheDir when set (--cache-dir,
// $CCM_CACHE_DIR), else <config dir>/cache/ccm.
func StoreDir(configDir, cacheDir string) string {
	if cacheDir != "" {
		return cacheDir
	}
	return ccm.DefaultRoot(configDir)
}

// ArchiveDir is where ccm archive puts archives: to (--to DIR) when set,
// else configured ($CCM_ARCHIVE_DIR, from the environment or config.env),
// else <home>/archive.
func ArchiveDir(home, to, configured string) string {
	if to != "" {
		return to
	}
	if configured != "" {
		return configured
	}
	return filepath.Join(home, "archive")
}

// InsideProjects reports whether dir is the config dir's projects/ folder
// or inside it, once symlinks are resolved. A project folder directly
// under projects/ may itself be a symlink (the one symlink rule,
// ListProjects); any other symlink counts by where it leads.
func InsideProjects(configDir, dir string) bool {
	_, _, ok := projectOfDir(configDir, dir)
	return ok
}

// projectOfDir says where dir lies in the config dir's projects/: in the
// project folder p, at rel inside it ("." for the folder itself), or,
// with p zero, projects/ itself. ok is false for a folder outside.
func projectOfDir(configDir, dir string) (p Project, rel string, ok bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		real, err = filepath.Abs(real) // a relative dir is from the working directory
	}
	if err != nil {
		return Project{}, "", false
	}
	projects, err := filepath.Abs(transcript.ProjectsDir(configDir))
	if err != nil {
		return Project{}, "", false
	}
	if r, err := filepath.EvalSymlinks(projects); err == nil {
		if rel, err := filepath.Rel(r, real); err == nil && !escapes(rel) {
			if rel == "." {
				return Project{}, ".", true
			}
			folder, rest, _ := strings.Cut(rel, string(filepath.Separator))
			if rest == "" {
				rest = "."
			}
			return Project{Folder: folder, Dir: filepath.Join(projects, folder)}, rest, true
		}
	}
	// A symlinked project folder: dir is inside it when, once resolved,
	// it lies under the link's target. The folder is the one dir names
	// (through the link), or any whose target holds dir.
	var folders []string
	if abs, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(projects, abs); err == nil && rel != "." && !escapes(rel) {
			folders = append(folders, strings.SplitN(rel, string(filepath.Separator), 2)[0])
		}
	}
	if ps, err := ListProjects(configDir); err == nil {
		for _, p := range ps {
			if p.Linked {
				folders = append(folders, p.Folder)
			}
		}
	}
	for _, folder := range folders {
		link := filepath.Join(projects, folder)
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(target, real); err == nil && !escapes(rel) {
			return Project{Folder: folder, Dir: link, Linked: true}, rel, true
		}
	}
	return Project{}, "", false
}

// escapes reports whether a relative path leads out of its base.
func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}
