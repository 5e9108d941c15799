// Package batch holds what ccm's batch commands share: the choice of the
// files a batch purge works on, and the worker pool that runs a command
// over many items (purge, archive, unarchive, clean).
package batch

import (
	"os"
	"time"
)

// Candidate is a file a batch may work on.
type Candidate struct {
	Path string
	// Named is true when the user named the file itself; a file found by
	// walking a directory or listing the sessions is not.
	Named bool
}

// Criteria choose the files of a batch purge.
type Criteria struct {
	Now time.Time
	// Active skips a file written to within this window unless it is
	// named: Claude Code is probably writing it.
	Active time.Duration
	// OlderThan skips a file written to within this window (0: none).
	OlderThan time.Duration
	// MinSize skips smaller files. Empty files are always skipped.
	MinSize int64
}

// Failure is a file that could not be looked at.
type Failure struct {
	Path string
	Err  error
}

// Selection is what Select chose.
type Selection struct {
	Todo    []string
	Skipped []string
	Failed  []Failure
}

// Select applies the criteria to the candidates, in their order.
func Select(files []Candidate, c Criteria) Selection {
	var s Selection
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil {
			s.Failed = append(s.Failed, Failure{f.Path, err})
			continue
		}
		age := c.Now.Sub(fi.ModTime())
		switch {
		case !f.Named && age < c.Active,
			c.OlderThan > 0 && age < c.OlderThan,
			fi.Size() < c.MinSize,
			fi.Size() == 0:
			s.Skipped = append(s.Skipped, f.Path)
			continue
		}
		s.Todo = append(s.Todo, f.Path)
	}
	return s
}
