package rewrite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/fsutil"
)

// BackupMode says how the original is kept before it is replaced.
type BackupMode string

// Backup modes. Link (the default) hard-links the original inode, which
// costs nothing and keeps the exact bytes; Copy writes a copy; Zstd a
// compressed copy; None keeps nothing.
const (
	BackupLink BackupMode = "link"
	BackupCopy BackupMode = "copy"
	BackupZstd BackupMode = "zstd"
	BackupNone BackupMode = "none"
)

// BackupStamp is the layout of the time stamp in backup names: unique to
// the millisecond, and a counter is added should two purges share one.
const BackupStamp = "20060102_150405.000"

// RestoreTag ends the names of the backups a restore makes
// (FILE.backup.<stamp>-restore): ccm restore --backup without --from skips
// them, so it brings back the state before the latest purge, not the one
// before the latest restore. The stamp before it still parses.
const RestoreTag = "-restore"

// MakeBackup keeps the original before it is replaced; tag ("" or
// RestoreTag) follows the stamp and its counter.
func MakeBackup(path string, src *os.File, mode BackupMode, tag string, now time.Time) (string, error) {
	if mode == BackupNone {
		return "", nil
	}
	base := path + ".backup." + now.Format(BackupStamp)
	for n := 0; n < 1000; n++ {
		name := base
		if n > 0 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		name += tag
		if mode == BackupZstd {
			name += ".zst"
		}
		var err error
		switch mode {
		case BackupLink:
			err = os.Link(path, name)
		case BackupCopy, BackupZstd:
			err = writeBackupCopy(name, src, mode == BackupZstd)
		default:
			return "", fmt.Errorf("unknown backup mode %q (link, copy, zstd or none)", mode)
		}
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, fsutil.SyncDir(dirOf(path))
	}
	return "", fmt.Errorf("no free backup name for %s", base)
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
