package fsutil

// Dir is a directory opened to read the small files in it: on Unix they
// are opened relative to its descriptor (openat, a shorter path walk per
// file, measurable at 100,000 files); elsewhere by their full path.
type Dir struct {
	path string
	fd   int // -1: none
}

// Path returns the directory's path.
func (d *Dir) Path() string { return d.path }
