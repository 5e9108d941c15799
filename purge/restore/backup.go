// Restoring from a backup: this file lists a transcript's purge backups
// (newest first), tells ccm's own backup names apart, and restores a
// transcript from one, keeping the lines Claude Code appended since.

package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"ccm/internal/fsutil"
	"ccm/transcript/rewrite"
)

// ErrNoBackup is FromBackup's error for a transcript that has no backup at
// all (one no purge changed); the error names the file.
var ErrNoBackup = errors.New("no backup")

// Backups lists the backups of path, newest first.
func Backups(path string) ([]string, error) {
	matches, err := filepath.Glob(globEscape(path) + ".backup.*")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if strings.Contains(filepath.Base(m), ".ccm-tmp-") {
			continue
		}
		out = append(out, m)
	}
	// Newest first: by stamp, then by the "-N" counter added to a stamp
	// already taken. Plain text order gets the counter wrong once a
	// ".zst" follows it ("000.zst" > "000-1.zst") and from -10 on.
	sort.SliceStable(out, func(i, j int) bool {
		si, ni := backupOrder(path, out[i])
		sj, nj := backupOrder(path, out[j])
		if si != sj {
			return si > sj
		}
		return ni > nj
	})
	return out, nil
}

// backupOrder splits a backup name into its stamp and counter.
func backupOrder(path, name string) (string, int) {
	rest := strings.TrimSuffix(strings.TrimPrefix(name, path+".backup."), ".zst")
	rest = strings.TrimSuffix(strings.TrimSuffix(rest, rewrite.RestoreTag), rewrite.HeldTag)
	stamp, counter, ok := strings.Cut(rest, "-")
	if !ok {
		return rest, 0
	}
	n, err := strconv.Atoi(counter)
	if err != nil {
		return rest, 0
	}
	return stamp, n
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// IsRestoreBackup tells the backups a restore made from a purge's.
func IsRestoreBackup(name string) bool {
	return strings.HasSuffix(strings.TrimSuffix(name, ".zst"), rewrite.RestoreTag)
}

// IsHeldBackup tells a replaced file kept for a process that may still
// write to it (FILE.backup.<stamp>-held) from a purge's backup.
func IsHeldBackup(name string) bool {
	return strings.HasSuffix(name, rewrite.HeldTag)
}

// FromBackup brings back a backup byte for byte: from, or the newest
// backup a purge made of path (the state before the latest purge; the
// backups restores make and the files kept for a writer are skipped). The
// current file is itself backed up first, so lines written since the
// backup was made are never lost either.
func FromBackup(ctx context.Context, path, from string, opt Options) (*Report, error) {
	name := path
	path = rewrite.RealPath(path)
	if from == "" {
		bs, err := Backups(path)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if !IsRestoreBackup(b) && !IsHeldBackup(b) {
				from = b
				break
			}
		}
		switch {
		case len(bs) == 0:
			return nil, fmt.Errorf("%w of %s (looked for %s.backup.*)", ErrNoBackup, name, filepath.Base(path))
		case from == "":
			return nil, fmt.Errorf("no purge backup of %s, only restores' own backups or files kept for a writer (%s); name one with --from", name, filepath.Base(bs[0]))
		}
	}
	bf, err := fsutil.OpenRegular(from)
	if err != nil {
		return nil, err
	}
	defer bf.Close()
	src, _, unlock, err := rewrite.Open(ctx, path, opt.LockDir, opt.LockWait, opt.DryRun, "restore")
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer src.Close()
	fi, _ := src.Stat()
	rep := &Report{Path: name, From: rewrite.AsNamed(name, path, from), BytesBefore: fi.Size(), Missing: []MissingStub{}, DryRun: opt.DryRun, Changed: true}
	if opt.DryRun {
		// The original's size: a compressed backup is counted as it
		// decompresses, which also checks that it can be read.
		r, err := rewrite.OpenBackup(from)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if rep.BytesAfter, err = io.Copy(io.Discard, r); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		return rep, nil
	}
	produce := func(out io.Writer) (bool, error) {
		r, err := rewrite.OpenBackup(from)
		if err != nil {
			return false, err
		}
		defer r.Close()
		n, err := io.Copy(out, r)
		rep.BytesAfter = n
		return true, err
	}
	// The whole current file is replaced: its "tail" is everything.
	res, err := rewrite.Replace(path, src, fi.Size(), opt.Backup, rewrite.RestoreTag, opt.Now(), produce, nil)
	if err != nil {
		return nil, err
	}
	rep.Backup = rewrite.AsNamed(name, path, res.Backup)
	rep.Holders = res.Holders
	rep.Kept = rewrite.AllAsNamed(name, path, res.Kept)
	rep.BytesAfter += res.TailBytes
	return rep, nil
}
