package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/objstore"
	"ccm/internal/objstore/agent"
	"ccm/sessions"
	"ccm/sessions/remote"
)

// endpointFlagUsage is the --endpoint flag of every command that reaches
// object storage.
const endpointFlagUsage = "S3-compatible server of s3:// URLs (default $CCM_S3_ENDPOINT, else AWS S3)"

// openRemote connects to the object storage an s3:// URL names, with the
// AWS credentials of the environment and files, and checks once that the
// server answers, takes the credentials and has the bucket; endpoint
// (--endpoint) wins over CCM_S3_ENDPOINT, and this machine writes under
// CCM_MACHINE (default: its host name).
func openRemote(ctx context.Context, g globalOptions, url, endpoint string) (*remote.Target, error) {
	cfg := maintainConfig(g)
	if endpoint == "" {
		endpoint = cfg.String("CCM_S3_ENDPOINT")
	}
	t, err := remote.Open(url, endpoint, cfg.String("CCM_MACHINE"), os.Getenv)
	if errors.Is(err, agent.ErrNoHelper) {
		return nil, err
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := t.Check(ctx); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// listRemote connects to the object storage an s3:// URL names and lists
// every machine's archives there, and picks those ids and sel choose
// (Listing.Select: every machine's with every, else the newest of each
// session): an id that names none is a usage error. The caller closes
// the target.
func listRemote(ctx context.Context, g globalOptions, url, endpoint string, ids []string, sel sessions.Selector, now time.Time, every bool) (*remote.Target, []remote.Listed, error) {
	return listRemoteWith(ctx, g, url, endpoint, ids, sel, now, every, false)
}

// listRemoteWith is listRemote; cached, the listing reads only the
// manifests of archives the listing cache (<ccm home>/cache/s3) has not
// seen, and its Listed are then Lite: for a command that shows them and
// downloads nothing (ccm sessions --archived --from).
func listRemoteWith(ctx context.Context, g globalOptions, url, endpoint string, ids []string, sel sessions.Selector, now time.Time, every, cached bool) (*remote.Target, []remote.Listed, error) {
	t, err := openRemote(ctx, g, url, endpoint)
	if err != nil {
		return nil, nil, err
	}
	var list *remote.Listing
	if cached {
		c := listingCache(g, t)
		if list, err = t.ListKnown(ctx, c.Known); err == nil {
			c.Save(list) // a cache not written is only slower next time
		}
	} else {
		list, err = t.List(ctx)
	}
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	picked, missing, err := list.Select(ids, sel, now, every)
	if err == nil && len(missing) > 0 {
		err = list.Refusal(missing[0]) // a newer ccm's
		if err == nil {
			err = usagef("no archive of session %s under %s (ccm sessions --archived --from %s lists them)", missing[0], t, t)
		}
	}
	if err != nil {
		t.Close()
		return nil, nil, sessionIDError(err)
	}
	return t, picked, nil
}

// listingCache is the cache of t's listings (remote.Cache), under
// <ccm home>/cache/s3.
func listingCache(g globalOptions, t *remote.Target) *remote.Cache {
	return remote.OpenCache(filepath.Join(ccmHome(g), "cache", "s3"), t)
}

// isRemote reports whether a destination or source is object storage.
func isRemote(s string) bool { return objstore.IsURL(s) }

// stageDir makes a private temporary folder under parent (default
// <ccm home>/tmp), named prefix followed by a random part, for what an
// upload or a download holds on its way, or a bundle before it is
// published; done removes it. The folders of runs that were killed go
// first: every run holds a shared lock (<ccm home>/locks/stage.lock)
// while its folder exists, and stale folders are removed only under the
// exclusive lock, which no live run lets another take.
func stageDir(ctx context.Context, g globalOptions, parent, prefix string) (dir string, done func(), err error) {
	if parent == "" {
		parent = filepath.Join(ccmHome(g), "tmp")
	}
	if err := fsutil.MkdirPrivate(parent); err != nil {
		return "", nil, err
	}
	lockPath := filepath.Join(ccmHome(g), "locks", "stage.lock")
	if lk, err := fsutil.LockFile(ctx, lockPath, true, 0); err == nil {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
				os.RemoveAll(filepath.Join(parent, e.Name()))
			}
		}
		lk.Unlock()
	}
	lk, err := fsutil.LockFile(ctx, lockPath, false, ccm.DefaultLockWait)
	if err != nil {
		return "", nil, err
	}
	if dir, err = os.MkdirTemp(parent, prefix); err != nil {
		lk.Unlock()
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir); lk.Unlock() }, nil
}

// dryStage is a private temporary folder of the system's for what a dry
// run downloads to verify it: a dry run writes nothing of ccm's, not even
// a lock file. done removes it.
func dryStage(prefix string) (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("", "ccm-"+prefix)
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// newSessionID is a random (version 4) UUID, as Claude Code's ids are.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
