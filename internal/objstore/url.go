package objstore

import (
	"fmt"
	"path"
	"strings"
)

// Location is a bucket and a key prefix: s3://BUCKET/PREFIX.
type Location struct {
	Bucket string
	Prefix string // no leading or trailing '/'; "" for the whole bucket
}

// Scheme starts every object storage URL.
const Scheme = "s3://"

// IsURL reports whether s names object storage (s3://...) rather than a
// local path. Anything that starts "s3:" counts, so that a mistyped URL
// (s3:/bucket, s3:bucket) is refused by ParseURL instead of naming a
// local folder "s3:" (./s3:x names one).
func IsURL(s string) bool {
	return strings.HasPrefix(strings.ToLower(s), "s3:")
}

// ParseURL reads s3://BUCKET[/PREFIX]. The bucket must be a valid S3
// bucket name (3 to 63 lowercase letters, digits, '.' and '-'); the
// prefix may not hold empty, "." or ".." segments.
func ParseURL(s string) (Location, error) {
	if !strings.HasPrefix(strings.ToLower(s), Scheme) {
		return Location{}, fmt.Errorf("%q is not an s3:// URL (want s3://BUCKET/PREFIX)", s)
	}
	rest := s[len(Scheme):]
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Location{}, fmt.Errorf("%q names no bucket (want s3://BUCKET/PREFIX)", s)
	}
	if err := checkBucket(bucket); err != nil {
		return Location{}, fmt.Errorf("%q: %v", s, err)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return Location{}, fmt.Errorf("%q: the prefix may not hold empty, \".\" or \"..\" parts", s)
			}
		}
	}
	return Location{Bucket: bucket, Prefix: prefix}, nil
}

// checkBucket applies S3's bucket naming rules.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Errorf("bucket name %q may hold only lowercase letters, digits, '.' and '-'", b)
		}
	}
	if !isAlnum(b[0]) || !isAlnum(b[len(b)-1]) {
		return fmt.Errorf("bucket name %q must start and end with a letter or digit", b)
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// Key joins the prefix and name into an object key.
func (l Location) Key(name ...string) string {
	parts := append([]string{l.Prefix}, name...)
	return strings.TrimPrefix(path.Join(parts...), "/")
}

// URL is the location or, with name, one object under it, as s3://...
func (l Location) URL(name ...string) string {
	k := l.Key(name...)
	if k == "" {
		return Scheme + l.Bucket
	}
	return Scheme + l.Bucket + "/" + k
}

// String is the location as s3://BUCKET/PREFIX.
func (l Location) String() string { return l.URL() }
