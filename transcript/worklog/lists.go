// Lists: this file keeps the worklog's bounded lists (files touched, tests
// run) and writes them out.

package worklog

import (
	"sort"
)

func (f *Facts) addTest(cmd string) int {
	for i, t := range f.Tests {
		if t.Command == cmd {
			f.Tests = append(append(f.Tests[:i:i], f.Tests[i+1:]...), Test{Command: cmd})
			return len(f.Tests) - 1
		}
	}
	f.Tests = append(f.Tests, Test{Command: cmd})
	if len(f.Tests) > MaxTests {
		// Pending results point at indexes: shift them with the list.
		f.Tests = f.Tests[1:]
		for id, p := range f.tools {
			if p.test >= 0 {
				p.test--
				f.tools[id] = p
			}
		}
	}
	return len(f.Tests) - 1
}

func addCapped(list []string, s string, n int) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= n {
		return list
	}
	return append(list, s)
}

// FileList returns the modified files, most recently changed last, at most
// MaxFiles.
func (f *Facts) FileList() []string {
	type fileAt struct {
		path string
		at   int
	}
	fs := make([]fileAt, 0, len(f.Files))
	for p, at := range f.Files {
		fs = append(fs, fileAt{p, at})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].at != fs[j].at {
			return fs[i].at < fs[j].at
		}
		return fs[i].path < fs[j].path
	})
	if len(fs) > MaxFiles {
		fs = fs[len(fs)-MaxFiles:]
	}
	out := make([]string, len(fs))
	for i, x := range fs {
		out[i] = x.path
	}
	return out
}

// TestLines renders the test commands with their last results.
func (f *Facts) TestLines() []string {
	out := make([]string, len(f.Tests))
	for i, t := range f.Tests {
		out[i] = t.Command
		if t.Result != "" {
			out[i] += " → " + t.Result
		}
	}
	return out
}
