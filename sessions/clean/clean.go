// Package clean plans and removes what accumulates in a Claude Code config
// dir and serves nobody: purge backups past an age or count, temp files
// left by killed ccm runs, empty and zero-byte sessions, and subagent
// folders whose session is gone. The plan gives a reason per deletion and
// never includes anything of a live session or held open for writing.
package clean

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/sessions"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// Policy says what to remove. The zero Policy removes nothing.
type Policy struct {
	// OldBackups removes purge backups made longer ago than
	// BackupsOlderThan; 0 means every backup.
	OldBackups       bool
	BackupsOlderThan time.Duration
	// CapBackups keeps only the KeepBackups newest backups per
	// transcript; 0 keeps none.
	CapBackups  bool
	KeepBackups int
	Temps       bool // temp files of killed ccm runs
	Empty       bool // 0-byte sessions and sessions with no record
	Orphans     bool // <session>/ folders without their transcript
}

// Any reports whether the policy removes anything.
func (p Policy) Any() bool {
	return p.OldBackups || p.CapBackups || p.Temps || p.Empty || p.Orphans
}

func (p Policy) backups() bool { return p.OldBackups || p.CapBackups }

// Item is one planned deletion.
type Item struct {
	Kind       string `json:"kind"` // backup, temp, empty, orphan
	Path       string `json:"path"`
	Bytes      int64  `json:"bytes"`
	Reason     string `json:"reason"`
	Dir        bool   `json:"dir,omitempty"`
	Transcript string `json:"-"` // whose lock to hold, "" for none
	file       sessions.File
	Result     string `json:"result,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Plan is the list of deletions and of what was spared for safety.
type Plan struct {
	Items  []*Item  `json:"deletions"`
	Spared []Spared `json:"spared"` // what the policy would remove but safety keeps
	Bytes  int64    `json:"bytes"`
}

// Spared is something the policy would remove that is kept, and why:
// everything of a live session, a file held open for writing.
type Spared struct {
	Kind   string `json:"kind"` // as Item.Kind
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// SpareGroup counts the spared items of one kind kept for one reason.
type SpareGroup struct {
	Kind   string
	Reason string
	Count  int
	Bytes  int64
}

// SparedGroups sums what was spared by kind and reason, most first, for
// a summary that says what was kept and why.
func (p *Plan) SparedGroups() []SpareGroup {
	var out []SpareGroup
	at := map[[2]string]int{}
	for _, s := range p.Spared {
		k := [2]string{s.Kind, s.Reason}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, SpareGroup{Kind: s.Kind, Reason: s.Reason})
		}
		out[i].Count++
		out[i].Bytes += s.Bytes
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

func (p *Plan) spare(kind, path string, bytes int64, reason string) {
	p.Spared = append(p.Spared, Spared{Kind: kind, Path: path, Bytes: bytes, Reason: reason})
}

// Decide plans a clean of configDir (and temp files under archiveRoot).
func Decide(ctx context.Context, configDir, archiveRoot string, pol Policy, now time.Time) (*Plan, []error, error) {
	projects, err := sessions.ListProjects(configDir)
	if err != nil {
		return nil, nil, err
	}
	live := sessions.NewLiveness(configDir, now)
	p := &Plan{Items: []*Item{}, Spared: []Spared{}}
	var errs []error
	for _, pr := range projects {
		if err := ctx.Err(); err != nil {
			return nil, errs, err
		}
		f, err := sessions.ScanFolder(pr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, f.Errors...)
		for _, s := range f.Sessions {
			if r := live.LiveAny(s); r != "" {
				// Nothing of a live session goes: what would have
				// gone is listed as kept, with why.
				p.spareSession(s, pol, now, live, liveReason(r))
				continue
			}
			p.backups(s, pol, now, live)
			p.temps(s, pol, now, live)
			if pol.Empty && !transcript.RecentlyWritten(s.Main.ModTime, now) {
				if reason := emptyReason(s); reason != "" {
					p.add(&Item{Kind: "empty", Path: s.Main.Path, Bytes: s.Main.Size, Reason: reason, Transcript: s.Main.Path, file: s.Main})
				}
			}
		}
		for _, s := range f.Orphans {
			p.backups(s, pol, now, live)
			p.temps(s, pol, now, live)
			if !pol.Orphans || len(s.CompanionDirs) == 0 {
				continue
			}
			var bytes int64
			held := ""
			for _, c := range s.Companion {
				bytes += c.Size
				if r := live.Live(c); r != "" {
					held = r
				}
			}
			if held != "" {
				p.spare("orphan", s.CompanionDir(), bytes, liveReason(held))
				continue
			}
			p.add(&Item{Kind: "orphan", Path: s.CompanionDir(), Bytes: bytes, Dir: true,
				Reason: fmt.Sprintf("subagent/tool-results folder of a session whose transcript %s.jsonl is gone", s.ID)})
		}
	}
	if pol.Temps && archiveRoot != "" {
		p.archiveTemps(archiveRoot, now)
	}
	sort.SliceStable(p.Items, func(i, j int) bool { return p.Items[i].Path < p.Items[j].Path })
	return p, errs, nil
}

// emptyReason says why a session is empty, "" when it is not.
func emptyReason(s *sessions.Session) string {
	if len(s.Companion) > 0 || len(s.Backups) > 0 {
		return ""
	}
	if s.Main.Size == 0 {
		return "zero-byte session (left by a resume without a turn)"
	}
	if s.Main.Size < 1<<20 {
		if pk, err := sessions.PeekFile(s.Main.Path, s.Main.Size); err == nil && pk.Empty {
			return "session with no record (blank lines only)"
		}
	}
	return ""
}

// spareSession lists what the policy would remove of a live session as
// spared, for reason.
func (p *Plan) spareSession(s *sessions.Session, pol Policy, now time.Time, live *sessions.Liveness, reason string) {
	if !pol.Any() {
		return
	}
	var would Plan
	would.backups(s, pol, now, live)
	would.temps(s, pol, now, live)
	if pol.Empty && emptyReason(s) != "" {
		would.add(&Item{Kind: "empty", Path: s.Main.Path, Bytes: s.Main.Size})
	}
	for _, it := range would.Items {
		p.spare(it.Kind, it.Path, it.Bytes, reason)
	}
	p.Spared = append(p.Spared, would.Spared...)
}

// liveReason words why a live session's files are kept: the first part of
// sessions.Liveness's reason (without the file it names), about the
// session.
func liveReason(r string) string {
	r, _, _ = strings.Cut(r, " (")
	return "their session was " + r
}

func (p *Plan) add(it *Item) {
	p.Items = append(p.Items, it)
	p.Bytes += it.Bytes
}

// backupTime is when a backup was made: the stamp in its name (a hard-link
// backup keeps the transcript's old mtime), else its mtime.
func backupTime(f sessions.File) time.Time {
	name := filepath.Base(f.Path)
	i := strings.Index(name, ".jsonl.backup.")
	if i >= 0 {
		stamp := strings.TrimSuffix(name[i+len(".jsonl.backup."):], ".zst")
		stamp, _, _ = strings.Cut(stamp, "-")
		if t, err := time.ParseInLocation(rewrite.BackupStamp, stamp, time.Local); err == nil {
			return t
		}
	}
	return f.ModTime
}

func (p *Plan) backups(s *sessions.Session, pol Policy, now time.Time, live *sessions.Liveness) {
	if !pol.backups() {
		return
	}
	bs := append([]sessions.File(nil), s.Backups...)
	sort.SliceStable(bs, func(i, j int) bool { return backupTime(bs[i]).After(backupTime(bs[j])) })
	transcript := filepath.Join(s.Dir, s.ID+".jsonl")
	for i, b := range bs {
		made := backupTime(b)
		reason := ""
		switch {
		case pol.CapBackups && pol.KeepBackups == 0:
			reason = "purge backup (--keep-backups 0: none kept)"
		case pol.CapBackups && i >= pol.KeepBackups:
			reason = fmt.Sprintf("purge backup %d of %d, beyond the %d newest kept", i+1, len(bs), pol.KeepBackups)
		case pol.OldBackups && pol.BackupsOlderThan == 0:
			reason = "purge backup (--backups-older-than 0: every backup)"
		case pol.OldBackups && now.Sub(made) > pol.BackupsOlderThan:
			reason = fmt.Sprintf("purge backup made %s ago, over %s", ui.Age(now.Sub(made)), ui.Age(pol.BackupsOlderThan))
		}
		if reason == "" {
			continue
		}
		if live.Held(b) {
			// A writer that held the transcript across a purge writes
			// into a hard-link backup: its lines are there.
			p.spare("backup", b.Path, b.Size, "it is open for writing by another process")
			continue
		}
		if s.Main.Path == "" {
			reason += " (its transcript is gone)"
		}
		p.add(&Item{Kind: "backup", Path: b.Path, Bytes: b.Size, Reason: reason, Transcript: transcript, file: b})
	}
}

func (p *Plan) temps(s *sessions.Session, pol Policy, now time.Time, live *sessions.Liveness) {
	if !pol.Temps {
		return
	}
	for _, t := range s.Temps {
		if live.Live(t) != "" {
			p.spare("temp", t.Path, t.Size, "it is in use (written in the last 2 minutes or open)")
			continue
		}
		p.add(&Item{Kind: "temp", Path: t.Path, Bytes: t.Size, Transcript: filepath.Join(s.Dir, s.ID+".jsonl"), file: t,
			Reason: fmt.Sprintf("temp file of a killed ccm run, %s old", ui.Age(now.Sub(t.ModTime)))})
	}
}

// archiveTemps finds temp files a killed ccm archive left; the caller
// holds the maintenance lock, so no archive is being written.
func (p *Plan) archiveTemps(root string, now time.Time) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".ccm-tmp-") {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() || transcript.RecentlyWritten(fi.ModTime(), now) {
			return nil
		}
		p.add(&Item{Kind: "temp", Path: path, Bytes: fi.Size(), Reason: fmt.Sprintf("partial archive of a killed ccm run, %s old", ui.Age(now.Sub(fi.ModTime())))})
		return nil
	})
}

// Remove deletes one planned item under its transcript's purge lock,
// checking first that a file is still the one planned.
func (p *Plan) Remove(ctx context.Context, it *Item, lockDir string) error {
	return p.remove(ctx, it, lockDir)
}

func (p *Plan) remove(ctx context.Context, it *Item, lockDir string) error {
	if it.Transcript != "" && lockDir != "" {
		lk, err := fsutil.LockFile(ctx, rewrite.LockPath(lockDir, it.Transcript), true, 0)
		if err != nil {
			if errors.Is(err, fsutil.ErrLockTimeout) {
				return fmt.Errorf("%s: a ccm purge is working on its transcript; left", it.Path)
			}
			return err
		}
		defer lk.Unlock()
	}
	if it.Dir {
		return os.RemoveAll(it.Path)
	}
	fi, err := os.Lstat(it.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if it.file.Path != "" && (fi.Size() != it.file.Size || !fi.ModTime().Equal(it.file.ModTime)) {
		return fmt.Errorf("%s: changed since the plan; left", it.Path)
	}
	if it.Kind == "empty" {
		if pids, _ := fsutil.LiveWriters(it.Path, fi); len(pids) > 0 {
			return fmt.Errorf("%s: opened for writing since the plan; left", it.Path)
		}
	}
	if err := os.Remove(it.Path); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(it.Path))
}
