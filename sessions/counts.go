package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"ccm/internal/fsutil"
)

// Counts gives exact line counts of transcripts and keeps them between
// listings in a small file, so that a listing reads a transcript whole
// only once: transcripts only grow (Claude Code appends), and a file that
// grew since it was counted has only its new bytes counted, once the
// bytes before them are seen unchanged. The head and tail a listing
// reads cannot estimate the count: lines near the ends (metadata,
// progress) are far shorter than those in the middle (tool outputs), and
// the estimate was 2 to 4 times too high on the corpus.
type Counts struct {
	path  string
	mu    sync.Mutex
	m     map[string]countEntry
	dirty bool
}

// countEntry is what a count was made of: the file (device and inode),
// how much of it was counted, and a hash of the last bytes counted, which
// must still be there for the count to grow with the file.
type countEntry struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Lines int64  `json:"lines"`
	Tail  string `json:"tail"` // fsutil.TailSum at Size
	// Open is set when the counted part ended without a newline: its
	// last line is counted, and the next byte may continue it.
	Open bool `json:"open,omitempty"`
}

// LoadCounts reads the counts kept at path; a missing or unreadable file
// gives an empty set (the counts are made again).
func LoadCounts(path string) *Counts {
	c := &Counts{path: path, m: map[string]countEntry{}}
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &c.m)
	}
	if c.m == nil {
		c.m = map[string]countEntry{}
	}
	return c
}

// Lines returns the number of lines of the file at path (a last line
// without its newline included), counting only what was not counted
// before. seen is the file as the listing found it: when it is the file
// (device, inode) and the size counted last time, the count is returned
// without opening the file again.
func (c *Counts) Lines(path string, seen File) (int64, error) {
	c.mu.Lock()
	e, ok := c.m[path]
	c.mu.Unlock()
	if ok && seen.ID != (fsutil.FileID{}) && e.Dev == seen.ID.Dev && e.Ino == seen.ID.Ino && e.Size == seen.Size {
		return e.Lines, nil
	}
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := fsutil.Fstat(f)
	if err != nil {
		return 0, err
	}
	dev, ino, size := st.ID.Dev, st.ID.Ino, st.Size
	if ok && e.Dev == dev && e.Ino == ino && e.Size == size {
		return e.Lines, nil
	}
	from, lines, open := int64(0), int64(0), false
	if ok && e.Dev == dev && e.Ino == ino && e.Size < size && e.Size > 0 {
		if sum, err := fsutil.TailSum(f, e.Size); err == nil && sum == e.Tail {
			from, lines, open = e.Size, e.Lines, e.Open
		}
	}
	n, endsOpen, err := countLines(io.NewSectionReader(f, from, size-from), open)
	if err != nil {
		return 0, err
	}
	lines += n
	sum, err := fsutil.TailSum(f, size)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.m[path] = countEntry{Dev: dev, Ino: ino, Size: size, Lines: lines, Tail: sum, Open: endsOpen}
	c.dirty = true
	c.mu.Unlock()
	return lines, nil
}

// countLines counts what the bytes of r add to the lines before them:
// each newline ends a line, and a last line without one counts too. open
// says that the bytes before r ended inside a line, which was counted and
// which r's first bytes continue.
func countLines(r io.Reader, open bool) (add int64, endsOpen bool, err error) {
	buf := make([]byte, 1<<20)
	var last byte
	seen := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			add += int64(bytes.Count(buf[:n], []byte{'\n'}))
			last, seen = buf[n-1], true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false, err
		}
	}
	if !seen {
		return 0, open, nil
	}
	if last != '\n' {
		add++
	}
	if open {
		add-- // the line counted before, ended or continued here
	}
	return add, last != '\n', nil
}

// Save writes the counts back when they changed, atomically; entries of
// files that are gone are dropped. A failure only costs the next listing
// a recount.
func (c *Counts) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	for p := range c.m {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			delete(c.m, p)
		}
	}
	b, err := json.Marshal(c.m)
	if err != nil {
		return err
	}
	if err := fsutil.MkdirPrivate(filepath.Dir(c.path)); err != nil {
		return err
	}
	// A cache: renamed into place whole, not synced.
	if err := fsutil.WriteFileUnsynced(c.path, fsutil.FileMode, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return err
	}
	c.dirty = false
	return nil
}
