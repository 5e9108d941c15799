// Pack index lines: this file writes the pack index's log lines (put,
// seen, access, pin, del), built by hand because one is written for every
// blob of a purge, and appends them under the store's metadata lock.

package ccm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"ccm/internal/fsutil"
)

func appendNum(b []byte, name string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

func appendStr(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, jstr(v)...)
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func opHead(op string, key Key, t time.Time) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"op":"`...)
	b = append(b, op...)
	b = append(b, `","key":"`...)
	b = append(b, key...)
	b = append(b, '"')
	return appendNum(b, "t", nanos(t))
}

func appendPin(b []byte, p PinInfo) []byte {
	b = appendStr(b, "pin", p.Level.String())
	if p.Reason != "" {
		b = appendStr(b, "reason", p.Reason)
	}
	if !p.PinnedAt.IsZero() {
		b = appendNum(b, "pinned_at", nanos(p.PinnedAt))
	}
	return b
}

// putLine records a frame. m carries creation time, pin and source; with
// snapshot, also the access time and count (a repack's rewritten log).
func putLine(m *Meta, loc packLoc, snapshot bool) []byte {
	b := opHead("put", m.Key, m.CreatedAt)
	b = appendStr(b, "pack", loc.pack)
	b = appendNum(b, "off", loc.off)
	b = appendNum(b, "len", loc.clen)
	b = appendStr(b, "codec", string(loc.codec))
	b = appendNum(b, "crc", int64(loc.crc))
	b = appendNum(b, "size", m.BytesUncompressed)
	b = appendNum(b, "lines", m.Lines)
	if snapshot {
		b = appendNum(b, "access", nanos(m.LastAccessAt))
		b = appendNum(b, "count", m.AccessCount)
	}
	if m.Pinned.Level > PinNone || snapshot {
		b = appendPin(b, m.Pinned)
	}
	if src, err := m.Source.MarshalJSON(); err == nil && len(src) > 2 {
		b = append(b, `,"source":`...)
		b = append(b, src...)
	}
	return append(b, '}', '\n')
}

func seenLine(key Key, t time.Time, pin PinLevel, reason string) []byte {
	b := opHead("seen", key, t)
	if pin > PinNone {
		b = appendPin(b, PinInfo{Level: pin, Reason: reason})
	}
	return append(b, '}', '\n')
}

func accessLine(key Key, t time.Time) []byte {
	return append(opHead("access", key, t), '}', '\n')
}

func pinLine(key Key, t time.Time, p PinInfo) []byte {
	return append(appendPin(opHead("pin", key, t), p), '}', '\n')
}

func delLine(key Key, t time.Time, why string) []byte {
	return append(appendStr(opHead("del", key, t), "why", why), '}', '\n')
}

// appendIndexLines appends log lines under meta.lock (the caller holds it)
// and, with sync, fsyncs the log (and packs/ when the log is new).
func (s *Store) appendIndexLines(data []byte, sync bool) error {
	if err := fsutil.MkdirPrivate(s.path(packsDir)); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	path := s.packIndexPath()
	_, statErr := os.Lstat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := fsutil.OpenPrivate(path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		// End a torn line left by a crash, so the new lines stay whole.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	if !sync {
		return nil
	}
	if err := fsutil.Sync(f); err != nil {
		return fmt.Errorf("pack index: %w", err)
	}
	if created {
		return fsutil.SyncDir(s.path(packsDir))
	}
	return nil
}
