package migrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"ccm/fsutil"
	"ccm/hooklib/memory"
)

// Entry is one file a migration changed: where its previous content was
// kept (none when migrate created it) and the sha256 of what migrate left.
type Entry struct {
	Path    string      `json:"path"`
	Backup  string      `json:"backup,omitempty"` // "" when the file did not exist
	Mode    fs.FileMode `json:"mode,omitempty"`
	After   string      `json:"after_sha256,omitempty"` // "" when migrate removed it
	Existed bool        `json:"existed"`
}

// Manifest lists what one migration changed: <ccm home>/backups/migrate-<stamp>/manifest.json.
type Manifest struct {
	Time    string  `json:"time"`
	Entries []Entry `json:"files"`
}

// Installer registers ccm's hooks (and slash commands) in a scope, as
// ccm install does.
type Installer func(scope string) error

// commandNames are the slash commands ccm install writes.
var commandNames = []string{"ccm.md", "purge.md", "pin-last.md", "pin-next.md", "pin-start.md", "pin-end.md"}

// Apply carries the plan out: every file it may change is copied under
// <ccm home>/backups/migrate-<stamp>/ first, and the manifest records
// which ones changed. It returns the manifest's path ("" when nothing
// changed).
func Apply(ctx context.Context, o Options, p *Plan, install Installer, now time.Time) (string, error) {
	if !p.Changes() {
		return "", nil
	}
	// Every file that may change, before anything is touched.
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
	paths = dedupe(paths)

	dir := filepath.Join(o.Home, "backups", "migrate-"+now.UTC().Format("20060102T150405.000Z"))
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return "", fmt.Errorf("create the backup folder: %w", err)
	}
	before := make([]Entry, len(paths))
	for i, path := range paths {
		e := Entry{Path: path}
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", fmt.Errorf("back up %s: %w; nothing was changed", path, err)
		default:
			fi, _ := os.Stat(path)
			e.Existed, e.Mode = true, fi.Mode().Perm()
			e.Backup = filepath.Join(dir, fmt.Sprintf("%03d-%s", i, filepath.Base(path)))
			if err := fsutil.WriteFileBytes(e.Backup, fsutil.FileMode, data); err != nil {
				return "", fmt.Errorf("back up %s: %w; nothing was changed", path, err)
			}
		}
		before[i] = e
	}
	// The manifest is written before the changes, so an interrupted run can
	// still be undone; it is rewritten with the results at the end.
	man := filepath.Join(dir, "manifest.json")
	if err := writeManifest(man, Manifest{Time: now.UTC().Format(time.RFC3339), Entries: before}); err != nil {
		return "", err
	}
	err := apply(ctx, o, p, install)
	var changed []Entry
	for _, e := range before {
		data, rerr := os.ReadFile(e.Path)
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
			if !e.Existed {
				continue
			}
		case rerr != nil:
			continue
		default:
			if e.Existed && bytes.Equal(data, readOr(e.Backup)) {
				os.Remove(e.Backup)
				continue
			}
			e.After = sha(data)
		}
		changed = append(changed, e)
	}
	if len(changed) == 0 && err == nil {
		// Nothing changed after all: leave no migration to undo.
		os.RemoveAll(dir)
		return "", nil
	}
	if werr := writeManifest(man, Manifest{Time: now.UTC().Format(time.RFC3339), Entries: changed}); werr != nil && err == nil {
		err = werr
	}
	return man, err
}

func apply(ctx context.Context, o Options, p *Plan, install Installer) error {
	for _, s := range p.Settings {
		if s.Problem != "" || len(s.Handlers) == 0 {
			continue
		}
		if err := removeHandlers(s); err != nil {
			return fmt.Errorf("%s: %w", s.Path, err)
		}
	}
	for _, f := range p.OldCommands {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, scope := range []string{"user", "project", "local"} {
		if p.Install[scope] {
			if err := install(scope); err != nil {
				return fmt.Errorf("ccm install --scope %s: %w", scope, err)
			}
		}
	}
	if len(p.OldCommands) > 0 && !p.Install["user"] {
		if err := install("user"); err != nil {
			return fmt.Errorf("ccm install: %w", err)
		}
	}
	if len(p.Config) > 0 {
		if err := appendConfig(filepath.Join(o.Home, "config.env"), p.Config); err != nil {
			return err
		}
	}
	if p.ToolMemoryFrom != "" {
		if err := importToolMemory(ctx, p.ToolMemoryFrom, p.ToolMemoryTo); err != nil {
			return fmt.Errorf("import the tool memory: %w", err)
		}
	}
	for _, s := range p.Summaries {
		data, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if err := fsutil.MkdirPrivate(p.SummaryDir); err != nil {
			return err
		}
		if err := fsutil.WriteFileBytes(filepath.Join(p.SummaryDir, filepath.Base(s)), fsutil.FileMode, data); err != nil {
			return err
		}
	}
	return nil
}

// removeHandlers deletes the earlier tools' handlers from a settings file,
// then the matcher groups and events they leave empty, editing the bytes
// (sjson) so the rest of the file keeps its formatting.
func removeHandlers(s Settings) error {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(s.Path)
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
	return fsutil.WriteFileBytes(s.Path, fi.Mode().Perm(), data)
}

// appendConfig adds NAME=value lines to config.env, each name only when
// the file does not set it yet.
func appendConfig(path string, lines []string) error {
	old, err := os.ReadFile(path)
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

func writeManifest(path string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileBytes(path, fsutil.FileMode, append(data, '\n'))
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
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
