// Package usage measures what takes the disk in a Claude Code config
// directory, per project and in total, by category: transcripts, subagent
// transcripts, tool results, purge backups, file-history, todos, debug
// logs, shell snapshots, the CCM store and ccm's archives. It stats files
// and reads none but one head per project (for the project's real path).
package usage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/sessions"
)

// Categories, in the order reports show them.
const (
	Transcripts  = "transcripts"
	Subagents    = "subagents"
	ToolResults  = "tool_results"
	Backups      = "backups"
	FileHistory  = "file_history"
	Todos        = "todos"
	Debug        = "debug"
	Archives     = "archives"
	OtherProject = "other" // memory/, temp files, unknown files in a project folder
	Shell        = "shell_snapshots"
	Store        = "ccm_store"
)

// ProjectCategories are the columns of a per-project row.
var ProjectCategories = []string{Transcripts, Subagents, ToolResults, Backups, FileHistory, Todos, Debug, Archives, OtherProject}

// Row is one project's usage (or the unattributed rest).
type Row struct {
	Project string           `json:"project"`
	Folder  string           `json:"folder,omitempty"`
	Bytes   map[string]int64 `json:"bytes"`
	Total   int64            `json:"total"`
}

// Report is a whole config dir's usage.
type Report struct {
	Projects []*Row           `json:"projects"` // largest first
	Global   map[string]int64 `json:"global"`   // not per project: shell snapshots, the store, unattributed
	Totals   map[string]int64 `json:"totals"`   // per category, everything
	Total    int64            `json:"total"`
	Errors   []string         `json:"errors,omitempty"`
}

// Options of Measure.
type Options struct {
	StoreRoot   string
	ArchiveRoot string
	Jobs        int
}

// Measure walks the config dir. Files with several links are counted once.
func Measure(ctx context.Context, configDir string, o Options) (*Report, error) {
	projects, err := sessions.ListProjects(configDir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Global: map[string]int64{}, Totals: map[string]int64{}}
	byFolder := map[string]*Row{}
	owner := map[string]string{} // session id -> folder
	var mu sync.Mutex
	seen := map[fsutil.FileID]bool{}
	count := func(id fsutil.FileID, n int64) int64 { // under mu
		if id != (fsutil.FileID{}) {
			if seen[id] {
				return 0
			}
			seen[id] = true
		}
		return n
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0) * 2
	}
	batch.Run(ctx, len(projects), jobs, func(i int) {
		p := projects[i]
		f, err := sessions.ScanFolder(p)
		mu.Lock()
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			mu.Unlock()
			return
		}
		row := &Row{Project: sessions.DecodeFolderGuess(p.Folder), Folder: p.Folder, Bytes: map[string]int64{}}
		for _, e := range f.Errors {
			rep.Errors = append(rep.Errors, e.Error())
		}
		add := func(cat string, file sessions.File) { row.Bytes[cat] += count(file.ID, file.Size) }
		for _, s := range append(append([]*sessions.Session(nil), f.Sessions...), f.Orphans...) {
			owner[s.ID] = p.Folder
			if s.Main.Path != "" {
				add(Transcripts, s.Main)
			}
			for _, c := range s.Companion {
				rel, _ := filepath.Rel(s.CompanionDir(), c.Path)
				switch {
				case sessions.IsSubagent(rel):
					add(Subagents, c)
				case sessions.IsToolResult(rel):
					add(ToolResults, c)
				default:
					add(OtherProject, c)
				}
			}
			for _, b := range s.Backups {
				add(Backups, b)
			}
			for _, t := range s.Temps {
				add(OtherProject, t)
			}
		}
		for _, a := range f.Agents {
			add(Subagents, a)
		}
		for _, x := range f.Other {
			add(OtherProject, x)
		}
		byFolder[p.Folder] = row
		mu.Unlock()
		if len(f.Sessions) > 0 {
			if pk, err := sessions.PeekFile(f.Sessions[0].Main.Path, min(f.Sessions[0].Main.Size, 64<<10)); err == nil && pk.Cwd != "" {
				mu.Lock()
				row.Project = pk.Cwd
				mu.Unlock()
			}
		}
	}, nil)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	attribute := func(cat, id string, n int64) {
		if row := byFolder[owner[id]]; row != nil && owner[id] != "" {
			row.Bytes[cat] += n
		} else {
			rep.Global[cat] += n
		}
	}
	// file-history/<session>/**
	if entries, err := os.ReadDir(filepath.Join(configDir, "file-history")); err == nil {
		for _, e := range entries {
			n := walkSize(filepath.Join(configDir, "file-history", e.Name()), count, rep)
			attribute(FileHistory, e.Name(), n)
		}
	}
	// todos/<session>-agent-<id>.json
	if entries, err := os.ReadDir(filepath.Join(configDir, "todos")); err == nil {
		for _, e := range entries {
			id, _, _ := strings.Cut(e.Name(), "-agent-")
			attribute(Todos, strings.TrimSuffix(id, ".json"), walkSize(filepath.Join(configDir, "todos", e.Name()), count, rep))
		}
	}
	// debug/<session>.txt
	if entries, err := os.ReadDir(filepath.Join(configDir, "debug")); err == nil {
		for _, e := range entries {
			attribute(Debug, strings.TrimSuffix(e.Name(), ".txt"), walkSize(filepath.Join(configDir, "debug", e.Name()), count, rep))
		}
	}
	// archives: <root>/<folder>/<id>.tar.zst and sidecars
	if o.ArchiveRoot != "" {
		if entries, err := os.ReadDir(o.ArchiveRoot); err == nil {
			for _, e := range entries {
				n := walkSize(filepath.Join(o.ArchiveRoot, e.Name()), count, rep)
				if row := byFolder[e.Name()]; row != nil {
					row.Bytes[Archives] += n
				} else {
					row = &Row{Project: sessions.DecodeFolderGuess(e.Name()), Folder: e.Name(), Bytes: map[string]int64{Archives: n}}
					byFolder[e.Name()] = row
				}
			}
		}
	}
	rep.Global[Shell] = walkSize(filepath.Join(configDir, "shell-snapshots"), count, rep)
	if o.StoreRoot != "" {
		rep.Global[Store] = walkSize(o.StoreRoot, count, rep)
	}
	for _, row := range byFolder {
		for cat, n := range row.Bytes {
			row.Total += n
			rep.Totals[cat] += n
		}
		rep.Projects = append(rep.Projects, row)
	}
	for cat, n := range rep.Global {
		rep.Totals[cat] += n
	}
	for _, n := range rep.Totals {
		rep.Total += n
	}
	sort.Slice(rep.Projects, func(i, j int) bool {
		if rep.Projects[i].Total != rep.Projects[j].Total {
			return rep.Projects[i].Total > rep.Projects[j].Total
		}
		return rep.Projects[i].Folder < rep.Projects[j].Folder
	})
	return rep, nil
}

// walkSize sums the regular files under path (or path itself), each
// inode once.
func walkSize(path string, count func(fsutil.FileID, int64) int64, rep *Report) int64 {
	var n int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				rep.Errors = append(rep.Errors, err.Error())
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		n += count(fsutil.IDOf(fi), fi.Size())
		return nil
	})
	_ = err
	return n
}
