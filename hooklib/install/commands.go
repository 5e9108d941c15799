package install

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"ccm/internal/fsutil"
)

// ccmName is how the slash commands call ccm: "ccm" when that name finds
// this binary on PATH, else its quoted absolute path.
func ccmName(exe string) string {
	if p, err := exec.LookPath("ccm"); err == nil {
		if a, err1 := os.Stat(p); err1 == nil {
			if b, err2 := os.Stat(exe); err2 == nil && os.SameFile(a, b) {
				return "ccm"
			}
		}
	}
	return ShellQuote(exe)
}

// CommandFiles returns the slash commands install writes, by file name,
// with {{CCM}} replaced by how they call ccm (ccmName).
func CommandFiles(o Options) (map[string][]byte, error) {
	files := map[string][]byte{}
	if o.Commands == nil {
		return files, nil
	}
	names, err := fs.Glob(o.Commands, "*.md")
	if err != nil {
		return nil, err
	}
	name := ccmName(o.Exe)
	for _, n := range names {
		data, err := fs.ReadFile(o.Commands, n)
		if err != nil {
			return nil, err
		}
		files[n] = bytes.ReplaceAll(data, []byte("{{CCM}}"), []byte(name))
	}
	return files, nil
}

// installCommands writes the slash commands that are missing or still
// ccm's own; a file the user changed is kept and reported. It returns the
// changes and the sha256 of each file it wrote (or would write).
func installCommands(o Options) ([]string, map[string]string, error) {
	files, err := CommandFiles(o)
	if err != nil {
		return nil, nil, err
	}
	dir := CommandsDir(o)
	var changes []string
	written := map[string]string{}
	for _, n := range sortedKeys(files) {
		p := filepath.Join(dir, n)
		slash := "/" + strings.TrimSuffix(n, ".md")
		old, err := os.ReadFile(p)
		switch {
		case err == nil && bytes.Equal(old, files[n]):
			continue
		case err == nil:
			changes = append(changes, "keep "+p+" (not ccm's "+slash+"; left as it is)")
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return changes, written, err
		}
		changes = append(changes, "add "+slash+" command: "+p)
		written[p] = sha(files[n])
		if o.DryRun {
			continue
		}
		if err := fsutil.MkdirPrivate(dir); err != nil {
			return changes, written, err
		}
		// Command files are read by Claude Code as the user who runs it:
		// 0600 like everything ccm writes. In a project, teammates get
		// them through git, which keeps no mode but the executable bit.
		if err := fsutil.WriteFileBytes(p, fsutil.FileMode, files[n]); err != nil {
			return changes, written, err
		}
	}
	return changes, written, nil
}

// removeCommands deletes command files ccm wrote and nobody changed since:
// their content matches what install recorded or what it would write now.
func removeCommands(o Options, recorded map[string]string) ([]string, error) {
	files, err := CommandFiles(o)
	if err != nil {
		return nil, err
	}
	dir := CommandsDir(o)
	var changes []string
	for _, n := range sortedKeys(files) {
		p := filepath.Join(dir, n)
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if !bytes.Equal(data, files[n]) && recorded[p] != sha(data) {
			changes = append(changes, "keep "+p+" (changed since ccm installed it)")
			continue
		}
		changes = append(changes, "remove /"+strings.TrimSuffix(n, ".md")+" command: "+p)
		if !o.DryRun {
			if err := os.Remove(p); err != nil {
				return changes, err
			}
		}
	}
	return changes, nil
}
