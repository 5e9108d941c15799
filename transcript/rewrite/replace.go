// Package rewrite replaces a transcript that Claude Code may still be
// appending to, without losing a byte or the order of its lines: it takes
// the transcript's sidecar lock, writes the new content into a temp file
// beside it, fsyncs it, keeps a backup of the original, copies over the
// lines appended meanwhile, renames the temp file over the original,
// fsyncs the directory, and waits until nothing more can write to the old
// file, putting lines that still reached it in their place. A process that
// keeps the file open for writing makes it refuse, or, when it opened the
// file in the instant before the rename, keeps the old file under a name
// it reports. ccm purge and ccm restore replace files through it; ccm
// archive and ccm clean take the same lock. docs/reliability.md gives the
// argument.
package rewrite

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"ccm/internal/fsutil"
	"ccm/transcript"
)

// Result is the outcome of a file replacement.
type Result struct {
	Unchanged bool   // the new content equals the old: nothing was replaced
	Backup    string // the backup's path ("" for BackupNone or when unchanged)
	// TailBytes were appended to the file while it was rewritten and
	// copied over, in the order they were written.
	TailBytes int64
	// Swaps counts the renames: 1, and one more each time lines that
	// reached the replaced file after the rename were put in their place.
	Swaps int
	Holders
}

// Holders says what may still write to the files a replacement took the
// transcript's name from, and where that goes.
type Holders struct {
	// HeldOpen lists the processes that still had a replaced file open
	// for writing when the rewrite stopped waiting (HeldWait): what they
	// write now goes to the files in Kept, not to the transcript.
	HeldOpen []int `json:"held_open_by,omitempty"`
	// StillWritten is set where the system cannot tell who has a file
	// open and a replaced file was still growing at HeldWait: something
	// writes to it, and it goes to the files in Kept.
	StillWritten bool `json:"still_written,omitempty"`
	// Kept names the replaced files that keep a name because something
	// may still write to them: held open, still written, or, where the
	// system cannot tell (Blind), written to lately. The backup when it
	// is a hard link, else FILE.backup.<stamp>-held.
	Kept []string `json:"kept_for_writers,omitempty"`
	// Unnamed is set when a file still held or written to could not keep
	// a name (a filesystem without hard links): what is written to it now
	// is lost.
	Unnamed bool `json:"unnamed,omitempty"`
	// Blind is set where the system cannot tell which processes have the
	// file open (fsutil.LiveWriters): liveness and the end of the appends
	// were judged by the file's modification time and size.
	Blind bool `json:"writers_unknown,omitempty"`
}

// errShrank and errReplaced mean another program rewrote the transcript
// while ccm was working on it; ccm then leaves everything as it is.
var (
	errShrank   = errors.New("the file shrank while it was being rewritten (another program rewrote it); nothing was changed")
	errReplaced = errors.New("the file was replaced by another program while it was being rewritten; nothing was changed")
)

// LastLineEnd returns the offset just past the last '\n' in the first size
// bytes of f: a final line without one may still be being written, so it
// is never parsed, only copied.
func LastLineEnd(f *os.File, size int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// RecordsEnd returns how much of the first size bytes of f the purge
// plans: up to the last '\n', and the final line too when it is a
// complete JSON object without its newline (a copy made by another tool,
// or a writer killed between the object and its newline). Such a line is
// a record like any other; only a final line that does not parse is torn,
// possibly still being written, and copied verbatim after the plan.
// unterminated reports that the planned part ends without a newline.
func RecordsEnd(f *os.File, size int64) (end int64, unterminated bool, err error) {
	end, err = LastLineEnd(f, size)
	if err != nil || end == size {
		return end, false, err
	}
	last := make([]byte, size-end) // bounded by the longest line
	if _, err := f.ReadAt(last, end); err != nil && err != io.EOF {
		return 0, false, err
	}
	if b := bytes.TrimLeft(last, " \t\r"); len(b) > 0 && b[0] == '{' && transcript.ValidJSON(b) {
		return size, true, nil
	}
	return end, false, nil
}

// Replace rewrites path crash-safely while Claude Code may still be
// appending to it (docs/reliability.md):
//
//  1. produce writes the new content, made from the first limit bytes of
//     src, into a temp file in the same directory whose name does not end
//     in .jsonl; what was appended to src meanwhile is copied after it,
//     and it is fsynced and given the original's mode and owner.
//  2. The original is backed up (a hard link by default) and keeps a name
//     until nothing can write to it any more: the backup when it is a
//     link, else a link FILE.backup.<stamp>-held, removed at the end.
//  3. A process that has the original open for writing (one that keeps a
//     descriptor; Claude Code opens the file per line) is waited for, up
//     to HeldWait; one still there makes Replace return a *HeldOpenError,
//     with nothing changed and the backup removed. The first look runs
//     beside the fsync of step 1 and the backup.
//  4. What was appended since is copied, and the temp file is renamed
//     over path at once; the directory is fsynced.
//  5. The rewrite waits until nothing more can reach the old file, and
//     lines that reached it after the last copy are put in order by
//     another swap (swap.go). during, if not nil, runs meanwhile.
//
// Until the rename the original is untouched; a crash leaves either the
// original or the new file whole, and the backup.
func Replace(path string, src *os.File, limit int64, mode BackupMode, tag string, now time.Time, produce func(w io.Writer) (bool, error), during func()) (res Result, err error) {
	orig, err := src.Stat()
	if err != nil {
		return res, err
	}
	tmp, err := fsutil.CreateTemp(path)
	if err != nil {
		return res, err
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	changed, err := produce(tmp)
	if err != nil {
		return res, err
	}
	if !changed {
		res.Unchanged = true
		return res, nil
	}
	produced, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return res, err
	}
	old := &replaced{f: src, fi: orig, copied: limit, live: transcript.RecentlyWritten(orig.ModTime(), time.Now())}
	if err := copyTail(tmp, src, &old.copied); err != nil {
		return res, err
	}
	// Whether another process holds the original open is asked first
	// beside the temp file's fsync and the backup: reading every process's
	// descriptors takes milliseconds. A holder is waited for right before
	// the rename; one that opens the file after this look is seen after it.
	free := make(chan bool, 1)
	go func() {
		pids, ok := fsutil.LiveWriters(path, orig)
		free <- ok && len(pids) == 0
	}()
	if err := prepare(tmp, orig); err != nil {
		return res, err
	}
	if err := sameFile(path, orig); err != nil {
		return res, err
	}
	if res.Backup, err = MakeBackup(path, src, mode, tag, now); err != nil {
		return res, fmt.Errorf("backup: %w", err)
	}
	s := &swapper{path: path, now: now, res: &res, h: hook(path)}
	s.hold(old, mode == BackupLink)
	if fi, err := src.Stat(); err == nil && fi.Size() > orig.Size() {
		old.live = true
	}
	if !<-free {
		if pids := s.awaitFree(old, time.Now().Add(HeldWait)); len(pids) > 0 {
			s.abort(old)
			return res, &HeldOpenError{Pids: pids}
		}
	}
	cur, err := s.install(tmp, old)
	if err != nil {
		s.abort(old)
		return res, err
	}
	renamed = true
	err = s.finish(old, cur, during)
	res.TailBytes = s.size - produced
	return res, cmp.Or(err, s.err)
}

// prepare gives tmp the mode and owner of like and fsyncs it.
func prepare(tmp *os.File, like os.FileInfo) error {
	if err := tmp.Chmod(like.Mode().Perm()); err != nil {
		return err
	}
	fsutil.KeepOwner(tmp, like)
	return fsutil.Sync(tmp)
}

// copyTail copies what src holds beyond *copied to w, until it stops
// growing (at most a few rounds, since an appender could keep it busy).
func copyTail(w io.Writer, src *os.File, copied *int64) error {
	for round := 0; round < 16; round++ {
		fi, err := src.Stat()
		if err != nil {
			return err
		}
		switch {
		case fi.Size() < *copied:
			return errShrank
		case fi.Size() == *copied:
			return nil
		}
		n, err := io.Copy(w, io.NewSectionReader(src, *copied, fi.Size()-*copied))
		*copied += n
		if err != nil {
			return err
		}
	}
	return nil
}

func sameFile(path string, orig os.FileInfo) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !os.SameFile(fi, orig) {
		return errReplaced
	}
	return nil
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			if i == 0 {
				return "/"
			}
			return path[:i]
		}
	}
	return "."
}

// CountingWriter counts the bytes written through it to W: a produce
// function wraps its writer in one to report the size of the new file.
type CountingWriter struct {
	W io.Writer
	N int64 // bytes written so far
}

// Write writes p to W and counts what W took.
func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
