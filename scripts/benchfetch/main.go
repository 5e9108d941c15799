// Command benchfetch downloads one session's archive from object storage
// as ccm does (remote.Target.Fetch: the GET through the ccm-s3 helper
// beside this program, the check against the manifest, the sidecar, the
// fsyncs) into a temporary folder, and removes it. scripts/bench-fetch.sh
// times it, built against this tree and against another commit.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"ccm/sessions/archive"
	"ccm/sessions/remote"
)

func main() {
	url := flag.String("url", "", "s3://BUCKET/PREFIX holding the archive")
	id := flag.String("session", "", "the archived session's id")
	dir := flag.String("dir", "", "folder to download into (a temporary folder is made in it and removed)")
	flag.Parse()
	if err := fetch(*url, *id, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "benchfetch:", err)
		os.Exit(1)
	}
}

func fetch(url, id, dir string) error {
	t, err := remote.Open(url, os.Getenv("CCM_S3_ENDPOINT"), "", os.Getenv)
	if err != nil {
		return err
	}
	defer t.Close()
	ctx := context.Background()
	l, err := t.List(ctx)
	if err != nil {
		return err
	}
	for _, a := range l.Archives {
		if a.Manifest.Session != id {
			continue
		}
		tmp, err := os.MkdirTemp(dir, "benchfetch-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		return t.Fetch(ctx, a, archive.ArchivePath(tmp, a.Manifest.Folder, id))
	}
	return fmt.Errorf("no archive of %s under %s", id, url)
}
