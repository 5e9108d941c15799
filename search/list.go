package search

import (
	"context"
	"path/filepath"
	"strings"

	"ccm/internal/batch"
	"ccm/internal/fsutil"
	"ccm/sessions"
	"ccm/transcript"
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
	// A listing is not cut short: an update needs all of it or none.
	batch.Run(context.Background(), len(projects), listJobs, func(i int) {
		per[i] = projectFiles(projects[i])
	}, nil)
	var out []liveFile
	for _, p := range per {
		out = append(out, p...)
	}
	return out, nil
}

// listJobs is how many project folders are listed at once.
const listJobs = 8

// projectFiles lists one project folder's transcripts: each session's
// <id>.jsonl, the subagent transcripts under <id>/subagents/, and the flat
// agent-*.jsonl files of older versions. It reads the folder once and
// stats each transcript relative to it (fsutil.StatDir), and reads no
// other companion folder (tool-results/ holds no transcript): this is
// most of what a search costs when little changed.
func projectFiles(p sessions.Project) []liveFile {
	entries, err := fsutil.StatDir(p.Dir, isTranscriptName)
	if err != nil {
		return nil // a folder that vanished or is unreadable: nothing to index
	}
	out := make([]liveFile, 0, len(entries))
	add := func(dir string, st fsutil.DirStat, session, agent string) {
		// The key and the path share one string: the key is the path
		// after the source's letter.
		key := string(srcLive) + dir + string(filepath.Separator) + st.Name
		out = append(out, liveFile{key: key, path: key[1:], session: session, agent: agent, folder: p.Folder,
			size: st.Size, mtime: st.MTime, dev: st.ID.Dev, ino: st.ID.Ino})
	}
	mains := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !e.Dir && transcript.IsSessionFileName(e.Name) {
			mains[strings.TrimSuffix(e.Name, ".jsonl")] = true
		}
	}
	for _, e := range entries {
		switch {
		case e.Dir:
			// A session's companion folder; one without its transcript
			// (an orphan) holds nothing a search shows.
			if mains[e.Name] {
				subagentFiles(filepath.Join(p.Dir, e.Name, "subagents"), e.Name, add)
			}
		case strings.HasPrefix(e.Name, "agent-"):
			// An older layout: the session is in the records; the agent
			// file is its own entry.
			add(p.Dir, e, "", agentID(e.Name))
		default:
			add(p.Dir, e, strings.TrimSuffix(e.Name, ".jsonl"), "")
		}
	}
	return out
}

// subagentFiles adds the transcripts under dir (<id>/subagents/ and its
// subfolders).
func subagentFiles(dir, session string, add func(string, fsutil.DirStat, string, string)) {
	entries, err := fsutil.StatDir(dir, isTranscriptName)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Dir {
			subagentFiles(filepath.Join(dir, e.Name), session, add)
			continue
		}
		add(dir, e, session, agentID(e.Name))
	}
}

// isTranscriptName selects the files a listing stats: *.jsonl, not ccm's
// dot-named temp files.
func isTranscriptName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}

func agentID(name string) string {
	return strings.TrimSuffix(strings.TrimPrefix(name, "agent-"), ".jsonl")
}
