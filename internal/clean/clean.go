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

	"ccm/fsutil"
	"ccm/internal/rewrite"
	"ccm/internal/sessions"
	"ccm/purge"
)

// Policy says what to remove. The zero Policy removes nothing.
type Policy struct {
	BackupsOlderThan time.Duration // purge backups made longer ago than this; 0: no age rule
	KeepBackups      int           // keep the N newest backups per transcript; 0: no count rule
	Temps            bool          // temp files of killed ccm runs
	Empty            bool          // 0-byte sessions and sessions with no record
	Orphans          bool          // <session>/ folders without their transcript
}

// Any reports whether the policy removes anything.
func (p Policy) Any() bool {
	return p.BackupsOlderThan > 0 || p.KeepBackups > 0 || p.Temps || p.Empty || p.Orphans
}

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
	Spared []string `json:"spared"` // live sessions and held files, with why
	Bytes  int64    `json:"bytes"`
}

// Decide plans a clean of configDir (and temp files under archiveRoot).
func Decide(ctx context.Context, configDir, archiveRoot string, pol Policy, now time.Time) (*Plan, []error, error) {
	projects, err := sessions.ListProjects(configDir)
	if err != nil {
		return nil, nil, err
	}
	live := sessions.NewLiveness(configDir, now)
	p := &Plan{Items: []*Item{}, Spared: []string{}}
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
				if pol.Any() {
					p.Spared = append(p.Spared, fmt.Sprintf("%s: live (%s)", s.Main.Path, r))
				}
				continue
			}
			p.backups(s, pol, now, live)
			p.temps(s, pol, now, live)
			if pol.Empty && len(s.Companion) == 0 && len(s.Backups) == 0 && now.Sub(s.Main.ModTime) > sessions.LiveWindow {
				reason := ""
				if s.Main.Size == 0 {
					reason = "zero-byte session (left by a resume without a turn)"
				} else if s.Main.Size < 1<<20 {
					if pk, err := sessions.PeekFile(s.Main.Path, s.Main.Size); err == nil && pk.Empty {
						reason = "session with no record (blank lines only)"
					}
				}
				if reason != "" {
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
				p.Spared = append(p.Spared, fmt.Sprintf("%s: %s", s.CompanionDir(), held))
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
		if t, err := time.ParseInLocation(purge.BackupStamp, stamp, time.Local); err == nil {
			return t
		}
	}
	return f.ModTime
}

func (p *Plan) backups(s *sessions.Session, pol Policy, now time.Time, live *sessions.Liveness) {
	if pol.BackupsOlderThan <= 0 && pol.KeepBackups <= 0 {
		return
	}
	bs := append([]sessions.File(nil), s.Backups...)
	sort.SliceStable(bs, func(i, j int) bool { return backupTime(bs[i]).After(backupTime(bs[j])) })
	transcript := filepath.Join(s.Dir, s.ID+".jsonl")
	for i, b := range bs {
		made := backupTime(b)
		reason := ""
		switch {
		case pol.KeepBackups > 0 && i >= pol.KeepBackups:
			reason = fmt.Sprintf("purge backup %d of %d, beyond the %d newest kept", i+1, len(bs), pol.KeepBackups)
		case pol.BackupsOlderThan > 0 && now.Sub(made) > pol.BackupsOlderThan:
			reason = fmt.Sprintf("purge backup made %s ago, over %s", age(now.Sub(made)), age(pol.BackupsOlderThan))
		}
		if reason == "" {
			continue
		}
		if r := live.Live(b); strings.Contains(r, "open for writing") {
			p.Spared = append(p.Spared, b.Path+": "+r)
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
			p.Spared = append(p.Spared, t.Path+": in use")
			continue
		}
		p.add(&Item{Kind: "temp", Path: t.Path, Bytes: t.Size, Transcript: filepath.Join(s.Dir, s.ID+".jsonl"), file: t,
			Reason: fmt.Sprintf("temp file of a killed ccm run, %s old", age(now.Sub(t.ModTime)))})
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
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < sessions.LiveWindow {
			return nil
		}
		p.add(&Item{Kind: "temp", Path: path, Bytes: fi.Size(), Reason: fmt.Sprintf("partial archive of a killed ccm run, %s old", age(now.Sub(fi.ModTime())))})
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
		if pids, _ := fsutil.Writers(it.Path, fi); len(pids) > 0 {
			return fmt.Errorf("%s: opened for writing since the plan; left", it.Path)
		}
	}
	if err := os.Remove(it.Path); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(it.Path))
}

func age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}
