package fsutil

import "os"

// WriteFileVolatile atomically replaces path with data like WriteFileBytes,
// but without the fsyncs. It is for small state that can be rebuilt, such
// as a hook's per-session counters: readers never see a torn file, a crash
// may lose the latest update, and the hook path saves the millisecond two
// fsyncs cost (restic writes its cache the same way).
func WriteFileVolatile(path string, perm os.FileMode, data []byte) error {
	f, err := CreateTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
