package transcript

import (
	"strings"
	"testing"
)

// TestEncodeProjectDirAsTheClient: the expected names were printed by
// Claude Code's own functions (the 2.1.330 client's folder encoder, run in
// node), not by this code: UTF-16 code units, one '-' for "é", two for an
// emoji, Windows paths, and the base-36 hash past 200 units.
func TestEncodeProjectDirAsTheClient(t *testing.T) {
	long := "/home/u/" + strings.Repeat("very-long-directory-name/", 9) + "café/proj"
	for _, c := range []struct{ in, want string }{
		{"/home/u/my_proj.v2", "-home-u-my-proj-v2"},
		{"/tmp/my project/café", "-tmp-my-project-caf-"},
		{"/home/u/😀x", "-home-u---x"},
		{`C:\Users\me\proj`, "C--Users-me-proj"},
		{long, "-home-u-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directo-lz4wzo"},
	} {
		if got := EncodeProjectDir(c.in); got != c.want {
			t.Errorf("EncodeProjectDir(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
