package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ccm/internal/objstore/s3test"
)

// TestS3UnarchiveOutput: ccm unarchive --from says what it did as a
// local unarchive does (docs/cli.md). A batch prints its summary first,
// naming the bucket, then how long the sessions stay, and each session's
// line only with -v, after them, in the order of the archives' keys, each
// saying the archive stays in the bucket; the summary's counts are the
// sum of those lines'. Sessions named one by one get each their line, in
// key order too, and no summary. A dry run has the same shape.
func TestS3UnarchiveOutput(t *testing.T) {
	srv := s3test.Need(t)
	url := srv.URL()
	a := newS3Env(t, srv, "laptop")
	a.sessions(3, 0)
	a.ok("archive", "--older-than", "1d", "--to", url)
	ids := slices.Sorted(slices.Values(a.ids)) // one folder: the keys' order
	note := `ccm archive and maintain leave the restored sessions here until they are left alone for 23d, counted from now\n`
	line := func(id string) string {
		return `restored ` + id + ` \((\d+) files, (\d+) stored contents\) to /home/dev/app from ` +
			regexp.QuoteMeta(url+"/laptop/"+a.folder+"/"+id+".") + `[0-9a-f]{16}\.tar\.zst \(the archive stays there\)\n`
	}

	b := newS3Env(t, srv, "desktop")
	dry := b.ok("unarchive", "-n", "--from", url, "--all")
	out := b.ok("unarchive", "--from", url, "--all")
	summary := `unarchive: restored 3 of 3 sessions \((\d+) files, (\d+) stored contents\) from ` + regexp.QuoteMeta(url) + `; 0 failed\n`
	if !regexp.MustCompile(`\A` + summary + note + `\z`).MatchString(out) {
		t.Errorf("unarchive --from --all:\n%s\nwant the summary and the note alone", out)
	}

	c := newS3Env(t, srv, "ci")
	out = c.ok("unarchive", "-v", "--from", url, "--all")
	m := regexp.MustCompile(`\A` + summary + note + line(ids[0]) + line(ids[1]) + line(ids[2]) + `\z`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("unarchive -v --from --all:\n%s\nwant the summary, the note, then each session in key order", out)
	}
	n := make([]int, len(m))
	for i := range m[1:] {
		n[i+1], _ = strconv.Atoi(m[i+1])
	}
	files, content := n[3]+n[5]+n[7], n[4]+n[6]+n[8]
	if n[1] != files || n[2] != content || content == 0 {
		t.Errorf("the summary counts %d files and %d stored contents, its sessions %d and %d:\n%s", n[1], n[2], files, content, out)
	}
	if want := fmt.Sprintf("unarchive: would restore 3 of 3 sessions (%d files, every archive verified) from %s; 0 failed\n", files, url); dry != want {
		t.Errorf("unarchive -n --from --all:\n%s\nwant\n%s", dry, want)
	}

	d := newS3Env(t, srv, "ci2")
	out = d.ok("unarchive", "--from", url, ids[2], ids[0][:8])
	if !regexp.MustCompile(`\A`+line(ids[0])+line(ids[2])+note+`\z`).MatchString(out) || strings.Contains(out, "unarchive:") {
		t.Errorf("unarchive --from ID ID:\n%s\nwant each session's line, in key order, then the note", out)
	}
}
