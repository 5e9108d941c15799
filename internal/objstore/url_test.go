package objstore

import (
	"strings"
	"testing"
)

// TestIsURL: a mistyped URL is taken for one (and refused by ParseURL),
// not for a local folder named "s3:".
func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{"s3://b/p": true, "S3://b": true, "s3:/b/p": true, "s3:b": true,
		"/tmp/s3:x": false, "./s3:x": false, "s3x": false, "": false} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix, err string }{
		{"s3://bkt/a/b/", "bkt", "a/b", ""},
		{"s3://bkt", "bkt", "", ""},
		{"S3://bkt/x", "bkt", "x", ""},
		{"s3://", "", "", "names no bucket"},
		{"s3:///prefix", "", "", "names no bucket"},
		{"s3://Bad_Bucket/x", "", "", "may hold only"},
		{"s3://bk/x", "", "", "3 to 63"},
		{"s3://bkt/a/../b", "", "", "\"..\""},
		{"/tmp/x", "", "", "not an s3:// URL"},
		{"s3:/bkt/x", "", "", "not an s3:// URL"},
		{"S3:bkt", "", "", "not an s3:// URL"},
	} {
		l, err := ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseURL(%q) = %v, %v; want an error with %q", c.in, l, err, c.err)
			}
			continue
		}
		if err != nil || l.Bucket != c.bucket || l.Prefix != c.prefix {
			t.Errorf("ParseURL(%q) = %+v, %v", c.in, l, err)
		}
	}
}
