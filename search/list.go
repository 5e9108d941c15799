package search

import (
	"path/filepath"
	"strings"
	"sync"

	"ccm/sessions"
)

// liveFile is a transcript found in the config dir.
type liveFile struct {
	key, path              string
	session, agent, folder string
	size, mtime            int64
	dev, ino               uint64
}

// liveFiles lists the main and subagent transcripts of every session (and
// the flat agent files of older versions), statting each once; listJobs
// project folders are listed at once (the time is the file system's).
func liveFiles(configDir string) ([]liveFile, error) {
	projects, err := sessions.ListProjects(configDir)
	if err != nil {
		return nil, err
	}
	per := make([][]liveFile, len(projects))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(listJobs, len(projects)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				per[i] = projectFiles(projects[i])
			}
		}()
	}
	for i := range projects {
		next <- i
	}
	close(next)
	wg.Wait()
	var out []liveFile
	for _, p := range per {
		out = append(out, p...)
	}
	return out, nil
}

// listJobs is how many project folders are listed at once.
const listJobs = 8

func projectFiles(p sessions.Project) []liveFile {
	fo, err := sessions.ScanFolder(p)
	if err != nil {
		return nil // a folder that vanished or is unreadable: nothing to index
	}
	var out []liveFile
	add := func(f sessions.File, session, agent string) {
		out = append(out, liveFile{key: string(srcLive) + f.Path, path: f.Path, session: session, agent: agent, folder: p.Folder,
			size: f.Size, mtime: f.ModTime.UnixNano(), dev: f.ID.Dev, ino: f.ID.Ino})
	}
	for _, s := range fo.Sessions {
		add(s.Main, s.ID, "")
		for _, c := range s.Companion {
			rel, _ := filepath.Rel(s.CompanionDir(), c.Path)
			if sessions.IsSubagent(rel) {
				add(c, s.ID, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(c.Path), "agent-"), ".jsonl"))
			}
		}
	}
	for _, a := range fo.Agents {
		// An older layout: the session is in the records; the agent
		// file is its own entry.
		add(a, "", strings.TrimSuffix(strings.TrimPrefix(filepath.Base(a.Path), "agent-"), ".jsonl"))
	}
	return out
}
