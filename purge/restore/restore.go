// Package restore undoes a purge: it puts the stored content of every
// stub in a transcript back in place (byte for byte for ccm's stubs, by
// value for claude-context-manager's), or brings back a backup a purge made. The
// file is replaced through package rewrite, with a backup first.
package restore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// Options configure a restore.
type Options struct {
	// Store holds the stubs' content; File needs it, FromBackup does not.
	Store *ccm.Store
	// LockDir holds the sidecar locks that keep two ccm processes from
	// rewriting one transcript at once ("" takes none).
	LockDir string
	// LockWait bounds how long to wait for that lock.
	LockWait time.Duration
	// DryRun reports what would be restored and writes nothing.
	DryRun bool
	// Backup says how the file being replaced is kept.
	Backup rewrite.BackupMode
	// Now is the clock, for backup names and tests.
	Now func() time.Time
}

// DefaultOptions are the defaults of ccm restore.
func DefaultOptions() Options {
	return Options{Backup: rewrite.DefaultBackup, LockWait: 10 * time.Second, Now: time.Now}
}

// Report says what a restore did.
type Report struct {
	Path string `json:"path"`
	// Changed is false when the file had nothing to put back (no stub,
	// or only stubs whose content is missing): it was left as it was.
	Changed     bool          `json:"changed"`
	Restored    int           `json:"stubs_restored"`
	Missing     []MissingStub `json:"stubs_missing"`
	BytesBefore int64         `json:"bytes_before"`
	BytesAfter  int64         `json:"bytes_after"`
	Backup      string        `json:"backup,omitempty"`
	From        string        `json:"from_backup,omitempty"`
	DryRun      bool          `json:"dry_run,omitempty"`
	// Holders says what may still write to the replaced file and where
	// that goes.
	rewrite.Holders
	// ByValue counts the stubs of claude-context-manager, restored by value: its
	// store holds the decoded text, which goes back as the JSON string
	// Claude Code writes for it, not as the original bytes. ByValueLines
	// are their lines (the first 50).
	ByValue      int   `json:"stubs_restored_by_value,omitempty"`
	ByValueLines []int `json:"lines_restored_by_value,omitempty"`

	objects int  // JSON object lines read: none means not a transcript
	typed   bool // one of them has a "type", as every record does
}

// MissingStub is a stub whose content could not be put back.
type MissingStub struct {
	Line   int     `json:"line"`
	Key    ccm.Key `json:"key"`
	Reason string  `json:"reason"`
}

var stubMarker = []byte(stub.Start)

// File puts the stored content of every stub in path back in place,
// byte for byte: a purge stores exactly the raw JSON value it cut out, so
// restoring is a splice. A stub whose blob is missing or damaged is
// reported and left as it is. The file is replaced as safely as a purge
// replaces it, with a backup first.
func File(ctx context.Context, path string, opt Options) (*Report, error) {
	if opt.Store == nil {
		return nil, errors.New("restore needs the CCM store")
	}
	name := path
	path = rewrite.RealPath(path)
	src, limit, unlock, err := rewrite.Open(ctx, path, opt.LockDir, opt.LockWait, opt.DryRun, "restore")
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer src.Close()
	fi, _ := src.Stat()
	rep := &Report{Path: name, BytesBefore: fi.Size(), Missing: []MissingStub{}, DryRun: opt.DryRun}
	produce := func(out io.Writer) (bool, error) {
		cw := &rewrite.CountingWriter{W: out}
		changed, err := restoreStream(ctx, io.NewSectionReader(src, 0, limit), cw, opt.Store, rep)
		rep.BytesAfter = cw.N + fi.Size() - limit
		// Garbage or JSON that is not a transcript: say so, as purge
		// does, instead of reporting nothing restored.
		if err == nil && (rep.objects == 0 || !rep.typed) {
			// In the words of every other command, naming the line.
			if serr := transcript.Sniff(io.NewSectionReader(src, 0, limit)); serr != nil {
				return false, serr
			}
			return false, transcript.ErrNoObjects
		}
		return changed, err
	}
	if opt.DryRun {
		changed, err := produce(io.Discard)
		rep.Changed = changed
		return rep, err
	}
	res, err := rewrite.Replace(path, src, limit, opt.Backup, rewrite.RestoreTag, opt.Now(), produce, nil)
	if err != nil {
		return nil, err
	}
	rep.Changed = !res.Unchanged
	rep.Backup = rewrite.AsNamed(name, path, res.Backup)
	rep.Holders = res.Holders
	rep.Kept = rewrite.AllAsNamed(name, path, res.Kept)
	rep.BytesAfter += res.TailBytes - (fi.Size() - limit)
	if res.Unchanged {
		rep.BytesAfter = rep.BytesBefore
	}
	return rep, nil
}

// restoreStream copies lines from r to w, expanding stubs.
func restoreStream(ctx context.Context, r io.Reader, w io.Writer, store *ccm.Store, rep *Report) (bool, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	rd := transcript.NewReader(r)
	changed := false
	skip := 0
	var buf []byte
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		out := l.Raw
		if l.Kind == transcript.Object {
			rep.objects++
			rep.typed = rep.typed || transcript.Lookup(rawjson.String(l.Body()), "type").Type == gjson.String
		}
		if skip > 0 {
			// A metadata record re-written after an archive stub: the
			// archive holds the original.
			skip--
			changed = true
			continue
		}
		if l.Kind == transcript.Object && isArchiveLine(l.Body()) {
			n, err := restoreArchive(ctx, l, bw, store, rep)
			if err != nil {
				return false, err
			}
			if n >= 0 {
				skip = n
				changed = true
				continue
			}
		}
		if l.Kind == transcript.Object && bytes.Contains(l.Raw, stubMarker) {
			body := l.Body()
			edits, err := restoreEdits(ctx, body, l.Num, store, rep)
			if err != nil {
				return false, err
			}
			if len(edits) > 0 {
				buf = rawjson.Splice(buf[:0], body, edits)
				buf = append(buf, l.Raw[len(body):]...)
				out = buf
				changed = true
			}
		}
		if _, err := bw.Write(out); err != nil {
			return false, err
		}
	}
	return changed, bw.Flush()
}

func isArchiveLine(body []byte) bool {
	return gjson.GetBytes(body, "type").Str == stub.ArchiveType
}

// restoreArchive writes the archived region a ccm-archive record stands
// for and returns how many following lines are re-written copies to skip,
// or -1 when the archive is missing (the record then stays).
func restoreArchive(ctx context.Context, l transcript.Line, w io.Writer, store *ccm.Store, rep *Report) (int, error) {
	body := l.Body()
	st, ok := stub.Parse(gjson.GetBytes(body, "archive").Str)
	if !ok {
		return -1, nil
	}
	rc, _, err := store.Open(ctx, st.Key)
	if err != nil {
		rep.Missing = append(rep.Missing, MissingStub{Line: l.Num, Key: st.Key, Reason: err.Error()})
		return -1, nil
	}
	defer rc.Close()
	// The archived region goes through the same restore as it streams out:
	// it holds the stubs of earlier purges (and, archived again, an older
	// archive record), so one restore brings everything back. The blob is
	// verified as it streams; a mismatch fails the restore before anything
	// replaces the transcript. Content addressing rules out cycles: no blob
	// can hold its own key.
	if _, err := restoreStream(ctx, rc, w, store, rep); err != nil {
		return -1, fmt.Errorf("line %d: archive %s: %w", l.Num, st.Key, err)
	}
	rep.Restored++
	return int(gjson.GetBytes(body, "kept").Int()), nil
}

// restoreEdits finds the stubs in one line and the splices that put their
// content back.
func restoreEdits(ctx context.Context, body []byte, num int, store *ccm.Store, rep *Report) ([]rawjson.Edit, error) {
	var edits []rawjson.Edit
	var ferr error
	var walk func(v, parent gjson.Result, key string)
	walk = func(v, parent gjson.Result, key string) {
		if ferr != nil {
			return
		}
		switch {
		case v.IsObject() || v.IsArray():
			v.ForEach(func(k, c gjson.Result) bool {
				walk(c, v, k.Str)
				return ferr == nil
			})
		case v.Type == gjson.String && strings.HasPrefix(v.Str, stub.Start):
			st, ok := stub.Parse(v.Str)
			if !ok {
				return
			}
			if meta, err := store.Stat(st.Key); err == nil && meta.Source.Type != stub.RawValueType {
				// Not cut out by ccm purge: claude-context-manager stored the
				// decoded text, so the value goes back as the JSON Claude
				// Code would have written for it (by value, not byte for
				// byte).
				e, err := valueFromText(ctx, store, st, v, parent, key)
				if err != nil {
					if errors.Is(err, context.Canceled) {
						ferr = err
						return
					}
					rep.Missing = append(rep.Missing, MissingStub{Line: num, Key: st.Key, Reason: err.Error()})
					return
				}
				edits = append(edits, e)
				rep.Restored++
				rep.ByValue++
				rep.ByValueLines = addLine(rep.ByValueLines, num)
				return
			}
			content, err := store.Get(ctx, st.Key)
			if err != nil {
				if errors.Is(err, context.Canceled) {
					ferr = err
					return
				}
				rep.Missing = append(rep.Missing, MissingStub{Line: num, Key: st.Key, Reason: err.Error()})
				return
			}
			// A purge stored the raw JSON value it cut out. An image block
			// became a text block holding the stub: the whole block goes back.
			target := v
			if key == "text" && parent.Get("type").Str == "text" && len(content) > 0 && content[0] == '{' &&
				gjson.GetBytes(content, "type").Str == "image" {
				target = parent
			}
			if !transcript.ValidJSON(content) {
				rep.Missing = append(rep.Missing, MissingStub{Line: num, Key: st.Key, Reason: "stored content is not a JSON value: left as is"})
				return
			}
			edits = append(edits, rawjson.ReplaceValue(target, content))
			rep.Restored++
		}
	}
	walk(gjson.Parse(rawjson.String(body)), gjson.Result{}, "")
	return edits, ferr
}

// valueFromText is the splice that puts back a stub whose stored content is
// text rather than the JSON value cut out of the line:
// claude-context-manager's stubs. A tool output or text goes back as a JSON
// string; an image (source "Image (PNG)"; the store holds its base64 data)
// goes back as the image block the text block stood for.
func valueFromText(ctx context.Context, store *ccm.Store, st stub.Stub, v, parent gjson.Result, key string) (rawjson.Edit, error) {
	content, err := store.Get(ctx, st.Key)
	if err != nil {
		return rawjson.Edit{}, err
	}
	if media, ok := strings.CutPrefix(st.Source, "Image ("); ok && key == "text" && parent.Get("type").Str == "text" {
		media = "image/" + strings.ToLower(strings.TrimSuffix(media, ")"))
		blk := []byte(`{"type":"image","source":{"type":"base64","media_type":`)
		blk = rawjson.Append(blk, media)
		blk = append(blk, `,"data":`...)
		blk = rawjson.Append(blk, bytes.TrimSpace(content))
		blk = append(blk, "}}"...)
		return rawjson.ReplaceValue(parent, blk), nil
	}
	return rawjson.ReplaceValue(v, rawjson.Append(nil, content)), nil
}

// addLine adds a line number to a list of at most 50.
func addLine(lines []int, n int) []int {
	if len(lines) < 50 && (len(lines) == 0 || lines[len(lines)-1] != n) {
		lines = append(lines, n)
	}
	return lines
}
