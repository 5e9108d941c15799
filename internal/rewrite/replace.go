// Package rewrite replaces a transcript that Claude Code may still be
// appending to, without losing a byte: it takes the transcript's sidecar
// lock, writes the new content into a temp file beside it, fsyncs it,
// keeps a backup of the original, copies over the lines appended
// meanwhile, renames the temp file over the original, fsyncs the
// directory, and waits for the writers of the old inode so that their
// late lines reach the new file. ccm purge and ccm restore replace files
// through it; ccm archive and ccm clean take the same lock.
package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"ccm/fsutil"
	"ccm/transcript"
)

// Result is the outcome of a file replacement.
type Result struct {
	Unchanged bool   // the new content equals the old: nothing was replaced
	Backup    string // the backup's path ("" for BackupNone or when unchanged)
	TailBytes int64  // bytes appended to the original while it was rewritten, copied over
	// HeldOpen lists the processes that still had the old file open for
	// writing when the rewrite stopped waiting: what they write now goes
	// to the old file (the backup), not to the transcript.
	HeldOpen []int
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
// appending to it (go-style.md §10):
//
//  1. produce writes the new content, made from the first limit bytes of
//     src, into a temp file in the same directory whose name does not end
//     in .jsonl; it is fsynced and given the original's mode and owner.
//  2. The original is backed up (a hard link by default).
//  3. Whatever was appended to the original past limit is copied to the
//     temp file verbatim, right before the rename.
//  4. The temp file is renamed over path and the directory fsynced.
//  5. The old inode is checked again, at once and once no process holds
//     it open for writing (at most HeldWait; lateWait without /proc), and any
//     bytes that reached it during the rename are appended to the new file.
//     during, if not nil, runs meanwhile.
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
	tmpName := tmp.Name()
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmpName)
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
	copied := limit
	if err := copyTail(tmp, src, &copied); err != nil {
		return res, err
	}
	if err := tmp.Chmod(orig.Mode().Perm()); err != nil {
		return res, err
	}
	fsutil.KeepOwner(tmp, orig)
	if err := fsutil.Sync(tmp); err != nil {
		return res, err
	}
	if err := sameFile(path, orig); err != nil {
		return res, err
	}
	if res.Backup, err = MakeBackup(path, src, mode, tag, now); err != nil {
		return res, fmt.Errorf("backup: %w", err)
	}
	// The bulk is on disk; now copy the last appends and rename at once,
	// so the window in which an append can reach the old inode is tiny.
	if err := copyTail(tmp, src, &copied); err != nil {
		return res, err
	}
	// The new file keeps the original's modification time: a purge does
	// not change the conversation, and Claude Code and ccm pick the
	// current session, and a batch the sessions to leave alone, by it.
	// An append after this point sets it anew, as it should.
	if fi, err := src.Stat(); err == nil {
		_ = os.Chtimes(tmpName, time.Time{}, fi.ModTime())
	}
	if err := fsutil.Sync(tmp); err != nil {
		return res, err
	}
	if err := tmp.Close(); err != nil {
		return res, err
	}
	if err := fsutil.Rename(tmpName, path); err != nil {
		return res, err
	}
	renamed = true
	if err := fsutil.SyncDir(dirOf(path)); err != nil {
		return res, err
	}
	// Appends that raced with the rename went to the old inode: look at
	// once, and again once no other process has the old file open for
	// writing.
	renamedAt := time.Now()
	for i := 0; i < 2; i++ {
		if i == 1 {
			duringDone := make(chan struct{})
			go func() {
				defer close(duringDone)
				if during != nil {
					during()
				}
			}()
			res.HeldOpen = awaitClosed(path, orig, renamedAt.Add(lateWait), renamedAt.Add(HeldWait))
			<-duringDone
		}
		if err := appendLate(path, src, &copied); err != nil {
			return res, fmt.Errorf("copy lines appended during the rename: %w", err)
		}
	}
	res.TailBytes = copied - limit
	return res, nil
}

// awaitClosed waits, after the rename, until no other process has the
// old file open for writing (seen free twice, settle apart), and returns
// the processes that still hold it at held. A writer that opened the old
// file before the rename may be descheduled between its open and its
// write on a loaded machine; its line still has to reach the new file, so
// a holder is waited for, not only lateWait. Where /proc cannot tell, it
// waits until blind.
func awaitClosed(path string, old os.FileInfo, blind, held time.Time) []int {
	free := 0
	for {
		pids, ok := fsutil.Writers(path, old)
		if !ok {
			time.Sleep(time.Until(blind))
			return nil
		}
		if len(pids) == 0 {
			if free++; free == 2 {
				return nil
			}
		} else {
			free = 0
		}
		if !time.Now().Before(held) {
			return pids
		}
		time.Sleep(min(settle, time.Until(held)))
	}
}

// lateWait is how long after the rename a rewrite waits for the old file
// where /proc cannot tell whether a process still has it open: long
// enough for a line whose open came before the rename (Claude Code opens,
// writes and closes per line) to land. HeldWait bounds the wait for a
// process /proc shows holding the old file open for writing: Claude
// Code's open-write-close takes microseconds, so one still holding it
// after that writes through a descriptor it keeps, and is reported.
// settle is how long the old file must stay free.
const (
	lateWait = 100 * time.Millisecond
	HeldWait = 2 * time.Second
	settle   = 10 * time.Millisecond
)

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

// appendLate appends to the new file what reached the old inode after the
// last tail copy.
func appendLate(path string, src *os.File, copied *int64) error {
	fi, err := src.Stat()
	if err != nil || fi.Size() <= *copied {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if err := copyTail(f, src, copied); err != nil {
		f.Close()
		return err
	}
	if err := fsutil.Sync(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
