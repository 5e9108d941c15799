//go:build unix

package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncOpenFlag is how syncFile opens a file: fsync works on a read-only
// descriptor.
const syncOpenFlag = os.O_RDONLY

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = Sync(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some filesystems refuse to sync directories; the rename is still atomic.
	if errors.Is(err, unix.EINVAL) {
		return nil
	}
	return err
}
