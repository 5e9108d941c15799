package rewrite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"ccm/internal/fsutil"
)

// ErrLocked is returned when another ccm process is rewriting the same
// transcript.
var ErrLocked = errors.New("another ccm process is rewriting this transcript")

// ErrReadOnly is returned for a transcript (or directory) whose owner
// write bit is off: someone protected it, and ccm respects that even when
// it runs as root, which the kernel would let through.
var ErrReadOnly = errors.New("read-only")

// LockPath is the sidecar lock of a transcript: a file under lockDir
// named by a hash of the transcript's real path, the one a purge or a
// restore takes; ccm archive and ccm clean take it too, so they never work
// on a transcript being rewritten. The lock is never on the transcript
// itself, since the rename swaps its inode.
func LockPath(lockDir, path string) string {
	sum := sha256.Sum256([]byte(RealPath(path)))
	return filepath.Join(lockDir, hex.EncodeToString(sum[:12])+".lock")
}

// Lock takes the sidecar lock of path under lockDir, waiting at most
// wait; a timeout is reported as ErrLocked. The returned function
// releases it.
func Lock(ctx context.Context, lockDir, path string, wait time.Duration) (unlock func(), err error) {
	lk, err := fsutil.LockFile(ctx, LockPath(lockDir, path), true, wait)
	if err != nil {
		if errors.Is(err, fsutil.ErrLockTimeout) {
			return nil, fmt.Errorf("%w (%v)", ErrLocked, err)
		}
		return nil, err
	}
	return func() { lk.Unlock() }, nil
}

// RealPath is path made absolute with its symlinks resolved, or as given
// when that fails. A transcript named through a symlink is rewritten where
// it lives (a rename over the link would replace the link with a copy and
// leave the real file as it was), and has one lock however it is named.
func RealPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// AsNamed names a file beside the transcript (its backup) the way the user
// named the transcript: name as given, path its RealPath. Relative stays
// relative when the name was no symlink; otherwise the file's real path
// is clearer.
func AsNamed(name, path, file string) string {
	if file == "" || filepath.Base(name) != filepath.Base(path) || RealPath(filepath.Dir(name)) != filepath.Dir(path) {
		return file
	}
	return filepath.Join(filepath.Dir(name), filepath.Base(file))
}

// AllAsNamed is AsNamed for each of files.
func AllAsNamed(name, path string, files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, AsNamed(name, path, f))
	}
	return out
}

// CheckWritable refuses to rewrite a file in a read-only directory: ccm
// replaces a transcript by renaming its new version into place, which the
// directory must allow. The file's own mode does not matter: the new
// version gets it (a transcript copied from a read-only source, mode 0444,
// is purged and stays 0444), as sed -i replaces such a file.
func CheckWritable(path string, fi os.FileInfo) error {
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if di.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("its directory %s is %w (mode %04o); ccm replaces files by renaming inside it (chmod u+w to allow it)", dir, ErrReadOnly, di.Mode().Perm())
	}
	return nil
}

// Open takes the transcript's sidecar lock under lockDir (none when
// lockDir is "" or in a dry run, which writes nothing) and opens it for a
// rewrite: it must be a non-empty regular file, and writable unless dry.
// Under the lock, the temp files of a killed ccm run are removed. limit is
// the end of its last complete line; verb ("restore") completes the
// message for an empty file. unlock releases the lock; the caller closes
// the file.
func Open(ctx context.Context, path, lockDir string, wait time.Duration, dryRun bool, verb string) (src *os.File, limit int64, unlock func(), err error) {
	unlock = func() {}
	if lockDir != "" && !dryRun {
		if unlock, err = Lock(ctx, lockDir, path, wait); err != nil {
			return nil, 0, nil, err
		}
	}
	src, err = fsutil.OpenRegular(path)
	if err != nil {
		unlock()
		return nil, 0, nil, err
	}
	fi, err := src.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err == nil && fi.Size() == 0 {
		err = fmt.Errorf("empty file (0 bytes), nothing to %s", verb)
	}
	if err == nil && !dryRun {
		err = CheckWritable(path, fi)
	}
	if err == nil && lockDir != "" && !dryRun {
		RemoveStaleTemps(path)
	}
	if err == nil {
		limit, err = LastLineEnd(src, fi.Size())
	}
	if err != nil {
		src.Close()
		unlock()
		return nil, 0, nil, err
	}
	return src, limit, unlock, nil
}
