package ccm

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"ccm/internal/batch"
)

// Damage is one damaged blob (or unusable index line) found by VerifyAll.
type Damage struct {
	Key    Key    `json:"key,omitempty"` // empty for an index line
	Where  string `json:"where"`         // the blob's file or pack, or the index
	Reason string `json:"reason"`
}

// VerifyReport is what VerifyAll found.
type VerifyReport struct {
	Blobs   int      `json:"blobs"`
	Bytes   int64    `json:"bytes_uncompressed"`
	Damaged []Damage `json:"damaged"`
}

// VerifyAll reads every stored copy of every blob (frames of packs and
// blob files), checks each frame's CRC and each content against its key,
// and reports each damaged blob once, with the first reason found, and
// each index line that could not be used. It counts no access. progress,
// if not nil, is called with blobs done and total.
func (s *Store) VerifyAll(ctx context.Context, keys []Key, progress func(done, total int)) (*VerifyReport, error) {
	l, err := s.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	entries := l.Entries
	if keys != nil {
		want := make(map[Key]bool, len(keys))
		for _, k := range keys {
			want[k] = true
		}
		entries = nil
		for _, e := range l.Entries {
			if want[e.Key] {
				entries = append(entries, e)
			}
		}
	}
	rep := &VerifyReport{}
	if keys == nil {
		for _, e := range l.IndexErrors {
			rep.Damaged = append(rep.Damaged, Damage{Where: s.packIndexPath(), Reason: strings.TrimPrefix(e, s.packIndexPath()+": ")})
		}
	}
	damage := make([]*Damage, len(entries))
	var done atomic.Int64
	batch.Run(ctx, len(entries), 0, func(i int) {
		damage[i] = s.verifyEntry(&entries[i])
		if d := done.Add(1); progress != nil && d%256 == 0 {
			progress(int(d), len(entries))
		}
	}, nil)
	if int(done.Load()) < len(entries) {
		return nil, ctx.Err()
	}
	for i, e := range entries {
		if e.Orphan() {
			continue
		}
		rep.Blobs++
		if e.Meta != nil {
			rep.Bytes += e.Meta.BytesUncompressed
		}
		if damage[i] != nil {
			rep.Damaged = append(rep.Damaged, *damage[i])
		}
	}
	return rep, nil
}

// verifyEntry checks every copy of one blob.
func (s *Store) verifyEntry(e *Entry) *Damage {
	for _, f := range e.Files {
		rc, err := s.openFile(e.Key, f)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if err != nil {
			// "KEY (PATH): corrupt blob: why" reads "PATH: corrupt blob: why".
			reason := strings.TrimPrefix(err.Error(), string(e.Key)+" ")
			if rest, ok := strings.CutPrefix(reason, "("); ok {
				reason = strings.Replace(rest, "): ", ": ", 1)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) {
				reason = "cannot read: " + reason
			}
			return &Damage{Key: e.Key, Where: f.Path, Reason: reason}
		}
	}
	return nil
}

// Verify reads every stored file of key and checks its hash, without
// counting an access. It returns an error wrapping ErrCorrupt that names
// the first bad file.
func (s *Store) Verify(key Key) error {
	if _, err := ParseKey(string(key)); err != nil {
		return err
	}
	files, err := s.findBlobs(key)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	for _, f := range files {
		if err := s.verifyFile(key, f); err != nil {
			return err
		}
	}
	return nil
}

// verifyFile reads a stored file to the end and checks its hash.
func (s *Store) verifyFile(key Key, bf BlobFile) error {
	rc, err := s.openFile(key, bf)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// verifyReader hashes content as it is read and turns the final io.EOF
// into ErrCorrupt when the hash does not match the key.
type verifyReader struct {
	r       io.Reader
	f       *os.File
	release func()
	h       hash.Hash
	key     Key
	path    string
	n       int64
	err     error
}

func (v *verifyReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case err == io.EOF:
		if !v.key.matches(v.h.Sum(nil)) {
			err = fmt.Errorf("%s (%s): %w: content does not match its key", v.key, v.path, ErrCorrupt)
		}
		v.err = err
	case err != nil:
		if errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%s (%s): %w", v.key, v.path, err)
		}
		v.err = err
	}
	return n, err
}

func (v *verifyReader) Close() error {
	if v.release != nil {
		v.release()
		v.release = nil
	}
	if v.f == nil {
		return nil
	}
	err := v.f.Close()
	v.f = nil
	return err
}
