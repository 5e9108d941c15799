package rewrite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/internal/fsutil"
)

// BackupMode says how the original is kept before it is replaced.
type BackupMode string

// Backup modes. Link hard-links the original inode, which costs nothing
// at once but keeps the whole original on disk; Copy writes a copy; Zstd
// (the default) a compressed copy; None keeps nothing.
const (
	BackupLink BackupMode = "link"
	BackupCopy BackupMode = "copy"
	BackupZstd BackupMode = "zstd"
	BackupNone BackupMode = "none"
)

// DefaultBackup is how purge and restore keep the file they replace. A
// zstd copy keeps the exact bytes at a quarter to a ninth of their size
// (real transcripts 8.7x, generated ones with images 3.9x), so a purge
// frees disk at once: with hard links, purging every session of a config
// dir grew it by about a third until the backups were cleaned, as the old
// inodes stay whole (scripts/bench-purge-disk.sh). The price is the
// compression's CPU time: a purge of a 200 MB generated transcript took
// 1.7x the CPU time of one with a link backup.
const DefaultBackup = BackupZstd

// BackupStamp is the layout of the time stamp in backup names: unique to
// the millisecond, and a counter is added should two purges share one.
const BackupStamp = "20060102_150405.000"

// RestoreTag ends the names of the backups a restore makes
// (FILE.backup.<stamp>-restore): ccm restore --backup without --from skips
// them, so it brings back the state before the latest purge, not the one
// before the latest restore. The stamp before it still parses.
const RestoreTag = "-restore"

// HeldTag ends the name of a replaced transcript kept, as a hard link,
// for a process that may still write to it (FILE.backup.<stamp>-held):
// one that held it open past the rewrite's wait, or one this system
// cannot see. It is the original plus what reached it, not a state
// before a purge, so ccm restore --backup without --from skips it too.
const HeldTag = "-held"

// MakeBackup keeps the original before it is replaced; tag ("" or
// RestoreTag) follows the stamp and its counter.
func MakeBackup(path string, src *os.File, mode BackupMode, tag string, now time.Time) (string, error) {
	var create func(name string) error
	ext := ""
	switch mode {
	case BackupNone:
		return "", nil
	case BackupLink:
		create = func(name string) error { return os.Link(path, name) }
	case BackupCopy, BackupZstd:
		if mode == BackupZstd {
			ext = ZstdExt
		}
		create = func(name string) error { return writeBackupCopy(name, src, mode == BackupZstd) }
	default:
		return "", fmt.Errorf("unknown backup mode %q (link, copy, zstd or none)", mode)
	}
	name, err := freeBackupName(path, tag+ext, now, create)
	if err != nil {
		return "", err
	}
	return name, fsutil.SyncDir(dirOf(path))
}

// linkHeld links the file at path as FILE.backup.<stamp>-held, the name
// that keeps a replaced transcript reachable while a writer may still
// reach it. The directory is fsynced with the rename that follows.
func linkHeld(path string, now time.Time) (string, error) {
	return freeBackupName(path, HeldTag, now, func(name string) error { return os.Link(path, name) })
}

// freeBackupName calls create with path.backup.<stamp><suffix>, or with
// a counter after the stamp while that name is taken, and returns the
// name create made.
func freeBackupName(path, suffix string, now time.Time, create func(name string) error) (string, error) {
	base := path + ".backup." + now.Format(BackupStamp)
	for n := 0; n < 1000; n++ {
		name := base
		if n > 0 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		name += suffix
		err := create(name)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("no free backup name for %s", base)
}

// ZstdExt ends the names of zstd backups.
const ZstdExt = ".zst"

// OpenBackup opens a backup for reading its original bytes, whatever its
// kind: a zstd backup (named *.zst) is decompressed as it is read. The
// file is opened as a regular file only (never a FIFO or a device).
func OpenBackup(path string) (io.ReadCloser, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ZstdExt) {
		return f, nil
	}
	zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &zstdBackup{zr: zr, f: f}, nil
}

type zstdBackup struct {
	zr *zstd.Decoder
	f  *os.File
}

func (z *zstdBackup) Read(p []byte) (int, error) { return z.zr.Read(p) }

func (z *zstdBackup) Close() error {
	z.zr.Close()
	return z.f.Close()
}

// ReadBackup returns a backup's original bytes, whatever its kind.
func ReadBackup(path string) ([]byte, error) {
	r, err := OpenBackup(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// writeBackupCopy writes a copy (or a zstd-compressed copy) of src,
// created exclusively with mode 0600 and fsynced.
func writeBackupCopy(name string, src *os.File, compress bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(name)
		}
	}()
	r := io.NewSectionReader(src, 0, 1<<62)
	if compress {
		zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			return err
		}
		if _, err := io.Copy(zw, r); err != nil {
			zw.Close()
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
	} else if _, err := io.Copy(f, r); err != nil {
		return err
	}
	if err := fsutil.Sync(f); err != nil {
		return err
	}
	ok = true
	return f.Close()
}
