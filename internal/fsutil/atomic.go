package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// DirMode and FileMode are the modes of everything ccm creates.
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// ErrInUse is returned by Rename when the system refuses to replace a
// file that another program has open (Windows; never on Unix, where the
// other program keeps the replaced file).
var ErrInUse = errors.New("the file is open in another program, and this system cannot replace an open file")

// MkdirPrivate creates dir and any missing parents with mode 0700.
// Existing directories keep their mode.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// CreateTemp creates a new file next to path whose name starts with
// ".<base>.ccm-tmp-" and does not end in the original extension, so tools
// that glob *.jsonl or *.json never pick it up. The file is created with
// mode 0600: there is no window with a looser mode.
func CreateTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	prefix := filepath.Join(dir, "."+base+".ccm-tmp-")
	for try := 0; ; try++ {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// WriteFile atomically replaces path with what write produces: the bytes
// go to a temp file in the same directory, which is fsynced, given mode
// perm, closed, renamed over path, and the directory is fsynced. On any
// error before the rename the temp file is removed and path is untouched.
func WriteFile(path string, perm os.FileMode, write func(w io.Writer) error) (err error) {
	return writeFile(path, perm, write, true)
}

// WriteFileUnsynced is WriteFile without the two fsyncs: readers never see
// a torn file, but after a crash the new file may be missing or empty. It
// is for writers that make a batch durable at once afterwards (SyncFiles),
// where one barrier replaces an fsync pair per file.
func WriteFileUnsynced(path string, perm os.FileMode, write func(w io.Writer) error) error {
	return writeFile(path, perm, write, false)
}

func writeFile(path string, perm os.FileMode, write func(w io.Writer) error, durable bool) (err error) {
	f, err := CreateTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	// CreateTemp made the file 0600, less what the umask takes away: never
	// looser, so only another mode needs the chmod.
	if perm != FileMode {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if durable {
		if err := Sync(f); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	if !durable {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// WriteFileBytes is WriteFile for content already in memory.
func WriteFileBytes(path string, perm os.FileMode, data []byte) error {
	return WriteFile(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
