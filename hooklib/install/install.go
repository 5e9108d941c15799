package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"ccm/internal/fsutil"
)

// Scopes name the settings files Claude Code reads (docs/hooks-protocol.md,
// "Registration").
const (
	ScopeUser    = "user"    // <claude dir>/settings.json
	ScopeProject = "project" // <project>/.claude/settings.json
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json
)

// Options say where to install and from what.
type Options struct {
	Scope      string
	DryRun     bool
	ClaudeDir  string
	ProjectDir string
	Home       string // ccm home: the install record and backups live here
	Exe        string // absolute path of the ccm binary the hooks will run
	Commands   fs.FS  // slash commands (*.md) to install
	Now        time.Time
	Features   Features // optional hooks left out
	// AutocompactPct, when > 0, is set as CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
	// in the settings' env.
	AutocompactPct int
}

// Result reports what Install or Uninstall did (or, on a dry run, would do).
type Result struct {
	Settings string   // settings file
	Content  []byte   // its new content
	Changed  bool     // settings content differs from before
	Backup   string   // backup of the previous content, if one was made
	Changes  []string // one line per change, settings and commands
	Notes    []string // what was left out on purpose, and why
}

// SettingsPath returns the settings file of a scope.
func SettingsPath(o Options) (string, error) {
	switch o.Scope {
	case ScopeUser, "":
		return filepath.Join(o.ClaudeDir, "settings.json"), nil
	case ScopeProject:
		return filepath.Join(o.ProjectDir, ".claude", "settings.json"), nil
	case ScopeLocal:
		return filepath.Join(o.ProjectDir, ".claude", "settings.local.json"), nil
	}
	return "", fmt.Errorf("unknown scope %q (want user, project or local)", o.Scope)
}

// CommandsDir returns the slash-command folder of a scope.
func CommandsDir(o Options) string {
	if o.Scope == ScopeProject || o.Scope == ScopeLocal {
		return filepath.Join(o.ProjectDir, ".claude", "commands")
	}
	return filepath.Join(o.ClaudeDir, "commands")
}

// LocalCommandsNote says why --scope local installs no slash commands.
const LocalCommandsNote = "left out the slash commands: Claude Code has no unshared project commands folder (.claude/commands is shared with the team); ccm install --scope user puts them in ~/.claude/commands"

// Install merges ccm's hooks into the scope's settings file and installs
// the slash commands.
func Install(o Options) (Result, error) {
	path, data, mode, err := readSettings(o)
	if err != nil {
		return Result{}, err
	}
	out, changes, created, err := MergeWith(data, o.Exe, RegistrationsFor(o.Features))
	if err != nil {
		return Result{}, settingsError(path, err)
	}
	var envPrev string
	if o.AutocompactPct > 0 {
		var made []string
		if out, made, envPrev, err = SetEnv(out, AutocompactVar, strconv.Itoa(o.AutocompactPct)); err != nil {
			return Result{}, settingsError(path, err)
		}
		created = append(created, made...)
		if len(made) > 0 || envPrev != "" {
			changes = append(changes, fmt.Sprintf("set env %s=%d", AutocompactVar, o.AutocompactPct))
		}
	}
	r := Result{Settings: path, Content: out, Changed: !bytes.Equal(out, data), Changes: changes}
	if len(bytes.TrimSpace(data)) == 0 {
		created = append(created, "file")
	}
	// Folders that do not exist yet are created by this install; uninstall
	// removes them again if they end up empty.
	want := []string{filepath.Dir(path), CommandsDir(o)}
	if o.Scope == ScopeLocal {
		want = want[:1]
	}
	var dirs []string
	for _, d := range want {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			dirs = append(dirs, d)
		}
	}
	var written map[string]string
	if o.Scope == ScopeLocal {
		// Claude Code reads commands from ~/.claude/commands and the
		// project's shared .claude/commands only: there is no unshared
		// project folder, so the local scope writes none.
		r.Notes = append(r.Notes, LocalCommandsNote)
	} else {
		var cmds []string
		if cmds, written, err = installCommands(o); err != nil {
			return r, err
		}
		r.Changes = append(r.Changes, cmds...)
	}
	if o.DryRun {
		return r, nil
	}
	if r.Changed {
		if r.Backup, err = backup(o, path, data); err != nil {
			return r, err
		}
		if err := writeSettings(path, out, mode); err != nil {
			return r, err
		}
	}
	if len(created) > 0 || len(written) > 0 || len(dirs) > 0 || envPrev != "" {
		err = updateRecord(o.Home, func(rec *record) {
			e := rec.Files[path]
			if envPrev != "" && !contains(e.Created, "env") && !contains(e.Created, "env/"+AutocompactVar) {
				if e.EnvPrev == nil {
					e.EnvPrev = map[string]string{}
				}
				if _, ok := e.EnvPrev[AutocompactVar]; !ok {
					e.EnvPrev[AutocompactVar] = envPrev // the user's own value, from before ccm
				}
			}
			e.Created = union(e.Created, created)
			e.Dirs = union(e.Dirs, dirs)
			if e.Commands == nil {
				e.Commands = map[string]string{}
			}
			for p, sum := range written {
				e.Commands[p] = sum
			}
			rec.Files[path] = e
		})
	}
	return r, err
}

// Uninstall removes what Install added: ccm's hooks (and the keys it
// created for them) and the slash commands it wrote that are unchanged
// since.
func Uninstall(o Options) (Result, error) {
	path, data, mode, err := readSettings(o)
	if err != nil {
		return Result{}, err
	}
	rec, _ := loadRecord(o.Home)
	entry, known := rec.Files[path]
	var created []string
	if known {
		created = append([]string{}, entry.Created...)
		if created == nil {
			created = []string{}
		}
	}
	r := Result{Settings: path, Content: data}
	orig := data
	if len(bytes.TrimSpace(data)) > 0 {
		// The env entry went in after the hooks, so it comes out first.
		var envChanges []string
		if known && validObject(data) == nil {
			if d, ok := UnsetEnv(data, AutocompactVar, created, entry.EnvPrev[AutocompactVar]); ok {
				data, envChanges = d, []string{"restore env " + AutocompactVar}
			}
		}
		out, changes, err := Unmerge(data, created, o.Exe)
		changes = append(envChanges, changes...)
		if err != nil {
			return Result{}, settingsError(path, err)
		}
		r.Content, r.Changed, r.Changes = out, !bytes.Equal(out, orig), changes
	}
	cmds, err := removeCommands(o, entry.Commands)
	if err != nil {
		return r, err
	}
	r.Changes = append(r.Changes, cmds...)
	if o.DryRun {
		return r, nil
	}
	if r.Changed {
		if r.Backup, err = backup(o, path, orig); err != nil {
			return r, err
		}
		if contains(created, "file") && isEmptyObject(r.Content) {
			// ccm created the file; leave no empty one behind.
			if err := os.Remove(path); err != nil {
				return r, err
			}
			r.Changes = append(r.Changes, "remove "+path+" (created by ccm install)")
		} else if err := writeSettings(path, r.Content, mode); err != nil {
			return r, err
		}
	}
	// Deepest first: the commands folder may sit inside the settings folder.
	for i := len(entry.Dirs) - 1; i >= 0; i-- {
		if os.Remove(entry.Dirs[i]) == nil { // only succeeds on an empty folder
			r.Changes = append(r.Changes, "remove "+entry.Dirs[i]+" (created by ccm install, now empty)")
		}
	}
	if known {
		err = updateRecord(o.Home, func(rec *record) { delete(rec.Files, path) })
	}
	return r, err
}

// readSettings returns the settings file's real path (symlinks followed, so
// a dotfile manager's link stays a link), content ("" when missing) and
// mode. A read-only file is refused: its owner made it so on purpose.
func readSettings(o Options) (string, []byte, os.FileMode, error) {
	path, err := SettingsPath(o)
	if err != nil {
		return "", nil, 0, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, 0o600, nil
	}
	if err != nil {
		return "", nil, 0, err
	}
	if fi.IsDir() {
		return "", nil, 0, fmt.Errorf("settings file %s is a directory", path)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return "", nil, 0, fmt.Errorf("settings file %s is read-only; make it writable to let ccm change it", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, 0, err
	}
	return path, data, fi.Mode().Perm(), nil
}

func settingsError(path string, err error) error {
	if errors.Is(err, ErrInvalidSettings) {
		return fmt.Errorf("settings file %s: %w; fix it first, ccm changed nothing", path, err)
	}
	return fmt.Errorf("settings file %s: %w", path, err)
}

func writeSettings(path string, data []byte, mode os.FileMode) error {
	if err := fsutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	return fsutil.WriteFileBytes(path, mode, data)
}

// backup saves the previous content under <ccm home>/backups, named after
// the scope's file and the time, before anything is written.
func backup(o Options, path string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", nil
	}
	dir := filepath.Join(o.Home, "backups")
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(path))
	name := fmt.Sprintf("%s-%s.%s", filepath.Base(path), hex.EncodeToString(sum[:4]), o.Now.UTC().Format("20060102T150405.000Z"))
	b := filepath.Join(dir, name)
	return b, fsutil.WriteFileBytes(b, fsutil.FileMode, data)
}

func isEmptyObject(d []byte) bool {
	t := bytes.TrimSpace(d)
	return len(t) >= 2 && t[0] == '{' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func union(a, b []string) []string {
	for _, x := range b {
		if !contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

func contains(a []string, x string) bool {
	for _, y := range a {
		if y == x {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
