package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"ccm/hooklib/memory"
	"ccm/internal/fsutil"
)

// Installer is how a migration installs ccm.
type Installer struct {
	// Install registers ccm's hooks (and slash commands) in a scope, as
	// ccm install does.
	Install func(scope string) error
	// Commands are ccm's slash commands by file name, as install writes
	// them: they take the place of the earlier tool's of the same names.
	Commands map[string][]byte
}

// commandNames are the slash commands ccm install writes.
var commandNames = []string{"ccm.md", "purge.md", "pin-last.md", "pin-next.md", "pin-start.md", "pin-end.md"}

// maxFile bounds a file a migration backs up or reads whole.
const maxFile = 64 << 20

// Apply carries the plan out as a journaled operation (see journal):
// every file it may change is backed up and listed first, each step is
// recorded as it ends, and a failure puts every file back. It returns
// the journal's path ("" when nothing changed). The caller holds Lock
// and has recovered any interrupted migration (Recover).
func Apply(ctx context.Context, o Options, p *Plan, inst Installer, now time.Time) (string, error) {
	if !p.Changes() {
		return "", nil
	}
	paths := filesToChange(o, p)
	RemoveUnjournaled(o.Home)
	dir, err := newJournalDir(o.Home, now)
	if err != nil {
		return "", fmt.Errorf("create the backup folder: %w", err)
	}
	j := &journal{path: filepath.Join(dir, "manifest.json"),
		m: Manifest{Time: now.UTC().Format(time.RFC3339), State: stateApplying, Dirs: missingDirs(paths)}}
	for i, path := range paths {
		e := Entry{Path: path}
		data, err := fsutil.ReadRegular(path, maxFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			os.RemoveAll(dir)
			return "", fmt.Errorf("back up %s: %w; nothing was changed", path, err)
		default:
			fi, err := os.Stat(path)
			if err != nil {
				os.RemoveAll(dir)
				return "", fmt.Errorf("back up %s: %w; nothing was changed", path, err)
			}
			e.Existed, e.Mode, e.Before = true, fi.Mode().Perm(), sha(data)
			e.Backup = filepath.Join(dir, fmt.Sprintf("%03d-%s", i, filepath.Base(path)))
			if err := fsutil.WriteFileBytes(e.Backup, fsutil.FileMode, data); err != nil {
				os.RemoveAll(dir)
				return "", fmt.Errorf("back up %s: %w; nothing was changed", path, err)
			}
			crashPoint()
		}
		j.m.Entries = append(j.m.Entries, e)
	}
	// From here on, a kill leaves a journal that says how to finish.
	if err := j.save(); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := apply(ctx, o, p, inst, j); err != nil {
		if _, uerr := j.putBack(false); uerr != nil {
			return j.path, fmt.Errorf("%v; putting the files back failed too (%v): ccm migrate --undo or --yes finishes it", err, uerr)
		}
		return "", fmt.Errorf("%w; every file was put back, nothing was changed", err)
	}
	// Done: the journal keeps the files that changed, with what they hold.
	var changed []Entry
	var unchanged []string
	for _, e := range j.m.Entries {
		cur, ok := current(e.Path)
		if ok && (e.Existed && cur == e.Before || !e.Existed && cur == "") {
			if e.Backup != "" {
				unchanged = append(unchanged, e.Backup)
			}
			continue
		}
		e.After = cur
		changed = append(changed, e)
	}
	j.m.Entries, j.m.State = changed, stateDone
	if err := j.save(); err != nil {
		return j.path, err
	}
	for _, b := range unchanged {
		os.Remove(b)
	}
	if len(changed) == 0 {
		os.RemoveAll(dir) // nothing changed after all: no migration to undo
		return "", nil
	}
	return j.path, nil
}

// filesToChange lists every file the plan may change, symlinks resolved
// (a settings file kept in a dotfiles repository stays a link to it).
func filesToChange(o Options, p *Plan) []string {
	var paths []string
	scopes := map[string]bool{}
	for _, s := range p.Settings {
		if s.Problem == "" && len(s.Handlers) > 0 {
			paths = append(paths, s.Path)
		}
	}
	for scope := range p.Install {
		scopes[scope] = true
	}
	if len(p.OldCommands) > 0 {
		scopes["user"] = true
	}
	for scope := range scopes {
		for _, s := range SettingsFiles(o) {
			if s.Scope == scope {
				paths = append(paths, s.Path)
			}
		}
		dir := ""
		switch scope {
		case "user":
			dir = filepath.Join(o.ClaudeDir, "commands")
		case "project":
			dir = filepath.Join(o.ProjectDir, ".claude", "commands")
		}
		for _, n := range commandNames {
			if dir != "" {
				paths = append(paths, filepath.Join(dir, n))
			}
		}
	}
	paths = append(paths, filepath.Join(o.Home, "install.json"), filepath.Join(o.Home, "config.env"))
	if p.ToolMemoryTo != "" {
		paths = append(paths, p.ToolMemoryTo)
	}
	for _, s := range p.Summaries {
		paths = append(paths, filepath.Join(p.SummaryDir, filepath.Base(s)))
	}
	for i, path := range paths {
		paths[i] = resolve(path)
	}
	sort.Strings(paths)
	return dedupe(paths)
}

// resolve follows the symlinks of path when it exists.
func resolve(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// missingDirs returns the folders above paths that do not exist, the
// shallowest first.
func missingDirs(paths []string) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		for d := filepath.Dir(p); !seen[d] && d != filepath.Dir(d); d = filepath.Dir(d) {
			seen[d] = true
			if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				dirs = append(dirs, d)
			}
		}
	}
	sort.Slice(dirs, func(a, b int) bool { return len(dirs[a]) < len(dirs[b]) })
	return dirs
}

// apply makes the changes, one step at a time, each ending in the
// journal. The order keeps every intermediate state working: ccm's
// slash commands replace the earlier ones in place (never a missing
// /purge), and ccm's hooks are installed before the earlier tools' are
// removed (never a settings file with neither).
func apply(ctx context.Context, o Options, p *Plan, inst Installer, j *journal) error {
	for _, f := range p.OldCommands {
		data, ok := inst.Commands[filepath.Base(f)]
		if !ok {
			return fmt.Errorf("ccm has no slash command %s to take the place of %s", filepath.Base(f), f)
		}
		if err := fsutil.WriteFileBytes(resolve(f), fsutil.FileMode, data); err != nil {
			return err
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	scopes := []string{}
	for _, scope := range []string{"user", "project", "local"} {
		if p.Install[scope] || scope == "user" && len(p.OldCommands) > 0 {
			scopes = append(scopes, scope)
		}
	}
	for _, scope := range scopes {
		if err := inst.Install(scope); err != nil {
			return fmt.Errorf("ccm install --scope %s: %w", scope, err)
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	for _, planned := range p.Settings {
		if planned.Problem != "" || len(planned.Handlers) == 0 {
			continue
		}
		// Found again in the file as it is now, after ccm's hooks went in.
		s := Settings{Scope: planned.Scope, Path: planned.Path}
		if !o.readSettings(&s) || s.Problem != "" {
			return fmt.Errorf("%s changed while migrating: %s", s.Path, s.Problem)
		}
		if err := removeHandlers(s); err != nil {
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	if len(p.Config) > 0 {
		if err := appendConfig(filepath.Join(o.Home, "config.env"), p.Config); err != nil {
			return err
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	if p.ToolMemoryFrom != "" {
		if err := importToolMemory(ctx, p.ToolMemoryFrom, p.ToolMemoryTo); err != nil {
			return fmt.Errorf("import the tool memory: %w", err)
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	for _, s := range p.Summaries {
		data, err := fsutil.ReadRegular(s, maxFile)
		if err != nil {
			return err
		}
		if err := fsutil.MkdirPrivate(p.SummaryDir); err != nil {
			return err
		}
		if err := fsutil.WriteFileBytes(filepath.Join(p.SummaryDir, filepath.Base(s)), fsutil.FileMode, data); err != nil {
			return err
		}
		if err := j.note(); err != nil {
			return err
		}
	}
	return nil
}

// removeHandlers deletes the earlier tools' handlers from a settings file,
// then the matcher groups and events they leave empty, editing the bytes
// (sjson) so the rest of the file keeps its formatting.
func removeHandlers(s Settings) error {
	path := resolve(s.Path)
	data, err := fsutil.ReadRegular(path, maxFile)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	hs := append([]Handler(nil), s.Handlers...)
	// Last first, so the indexes of the rest stay right.
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Event != hs[j].Event {
			return hs[i].Event < hs[j].Event
		}
		if hs[i].Group != hs[j].Group {
			return hs[i].Group > hs[j].Group
		}
		return hs[i].Index > hs[j].Index
	})
	for _, h := range hs {
		ev := "hooks." + escape(h.Event)
		g := ev + "." + strconv.Itoa(h.Group)
		data = deleteItem(data, g+".hooks", h.Index)
		if n := len(gjsonArray(data, g+".hooks")); n == 0 {
			data = deleteItem(data, ev, h.Group)
		}
		if n := len(gjsonArray(data, ev)); n == 0 {
			if data, err = sjson.DeleteBytes(data, ev); err != nil {
				return err
			}
		}
	}
	if !json.Valid(data) {
		return fmt.Errorf("removing the earlier tools' hooks gave invalid JSON; nothing written")
	}
	return fsutil.WriteFileBytes(path, fi.Mode().Perm(), data)
}

// appendConfig adds NAME=value lines to config.env, each name only when
// the file does not set it yet.
func appendConfig(path string, lines []string) error {
	path = resolve(path)
	old, err := fsutil.ReadRegular(path, maxFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "export ")
		if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			have[strings.TrimSpace(k)] = true
		}
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	n := 0
	for _, l := range lines {
		k, _, _ := strings.Cut(l, "=")
		if have[k] {
			continue
		}
		if n == 0 {
			b.WriteString("# imported by ccm migrate from the earlier tools' settings\n")
		}
		b.WriteString(l + "\n")
		n++
	}
	if n == 0 {
		return nil
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	return fsutil.WriteFileBytes(path, fsutil.FileMode, b.Bytes())
}

// importToolMemory adds the earlier NDJSON store's lessons that ccm's
// does not hold yet, oldest first.
func importToolMemory(ctx context.Context, from, to string) error {
	src := &memory.Store{Path: from, Max: 1 << 20}
	old, err := src.List()
	if err != nil {
		return err
	}
	dst := &memory.Store{Path: to}
	have, err := dst.List()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, e := range have {
		seen[e.Key()] = true
	}
	for _, e := range old {
		if seen[e.Key()] {
			continue
		}
		seen[e.Key()] = true
		if _, err := dst.Record(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// escape quotes the characters sjson paths give a meaning to.
func escape(s string) string {
	r := strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`)
	return r.Replace(s)
}

// deleteItem removes element i of the array at path with the comma and
// white space that separate it from its neighbour, so the lines around it
// keep their layout. An only element goes with the white space inside
// the brackets ("[]").
func deleteItem(data []byte, path string, i int) []byte {
	arr := gjson.GetBytes(data, path)
	items := arr.Array()
	if i >= len(items) || arr.Index <= 0 {
		return data
	}
	for _, it := range items {
		if it.Index <= 0 { // gjson could not tell where: let sjson cut it
			if out, err := sjson.DeleteBytes(data, path+"."+strconv.Itoa(i)); err == nil {
				return out
			}
			return data
		}
	}
	base := arr.Index
	start := func(k int) int { return items[k].Index } // gjson gives them from the start of data
	end := func(k int) int { return start(k) + len(items[k].Raw) }
	var from, to int
	switch {
	case len(items) == 1:
		from, to = base+1, base+len(arr.Raw)-1
	case i < len(items)-1:
		from, to = start(i), start(i+1)
	default:
		from, to = end(i-1), end(i)
	}
	return append(data[:from:from], data[to:]...)
}
