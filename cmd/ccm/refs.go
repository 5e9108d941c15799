package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/prune"
	"ccm/sessions"
	"ccm/transcript"
)

// The commands that write, move or remove files referencing the store
// keep its reference index current (prune.RefIndex): prune then reads only
// what changed since. Only recording an archive folder is required for
// safety (recordRoots); the other updates save prune work, and one that
// cannot take the index's lock in time is skipped, because prune checks
// every file against the index anyway.

// recordRoots records folders or files outside the config dir's
// projects/ and the archive folder of the configuration, so that every
// prune reads them: an archive folder given with --to, a transcript purged
// elsewhere. It creates the store's refs/ folder when the store exists or
// must know the root; it fails when the index cannot be written, and the
// caller then writes nothing that would depend on it.
func recordRoots(ctx context.Context, g globalOptions, roots ...string) error {
	x, err := prune.OpenIndex(ctx, ensureStoreDir(g), ccm.DefaultLockWait)
	if err != nil {
		return fmt.Errorf("record %s in the reference index: %w", roots, err)
	}
	if err := x.AddRoots(roots...); err != nil {
		x.Close()
		return fmt.Errorf("record %s in the reference index: %w", roots, err)
	}
	return x.Close()
}

// ensureStoreDir returns the store's folder, created (0700) if missing:
// the reference index lives in it.
func ensureStoreDir(g globalOptions) string {
	root := storeRoot(g)
	_ = fsutil.MkdirPrivate(root) // OpenIndex reports what fails
	return root
}

// noteRefs brings the index up to date with files a command just wrote,
// renamed or removed, found under root. Best effort: no store yet, or
// the index busy, and the next prune reads them instead.
func noteRefs(ctx context.Context, g globalOptions, root string, paths ...string) {
	if len(paths) == 0 {
		return
	}
	x, err := prune.OpenIndex(ctx, storeRoot(g), prune.IndexLockWait)
	if err != nil {
		return
	}
	defer x.Close()
	if err := x.Note(ctx, root, paths...); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(g.Stderr, "ccm: warning: the reference index was not updated (the next prune reads these files): %v\n", err)
	}
}

// noteTranscripts notes transcripts and their backups after a purge or a
// restore: those under the config dir's projects/ by that root, any other
// recorded as a root of its own (durably), so that every prune keeps
// reading it: prune would otherwise never see a transcript purged outside
// the config dir, and could delete what it references.
func noteTranscripts(ctx context.Context, g globalOptions, paths ...string) {
	var inside, outside []string
	for _, p := range paths {
		switch {
		case p == "":
		case sessions.InsideProjects(g.ClaudeDir, filepath.Dir(p)):
			inside = append(inside, p)
		default:
			outside = append(outside, absPath(p))
		}
	}
	if len(outside) == 0 {
		noteRefs(ctx, g, transcript.ProjectsDir(g.ClaudeDir), inside...)
		return
	}
	x, err := prune.OpenIndex(ctx, ensureStoreDir(g), ccm.DefaultLockWait)
	if err == nil {
		defer x.Close()
		err = x.AddRoots(outside...)
	}
	if err != nil {
		fmt.Fprintf(g.Stderr, "ccm: warning: %d transcripts outside %s were not recorded in the reference index: prune keeps what they reference only while they are there and ccm purge or restore runs on them again: %v\n",
			len(outside), transcript.ProjectsDir(g.ClaudeDir), err)
		return
	}
	for _, p := range outside {
		if err := x.Note(ctx, p, p); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(g.Stderr, "ccm: warning: the reference index was not updated for %s (the next prune reads it): %v\n", p, err)
		}
	}
	if err := x.Note(ctx, transcript.ProjectsDir(g.ClaudeDir), inside...); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(g.Stderr, "ccm: warning: the reference index was not updated (the next prune reads these files): %v\n", err)
	}
}

// recordOutside records the files outside the config dir's projects/ as
// roots, without reading them (the next prune does): backups a purge or a
// restore made beside a transcript elsewhere.
func recordOutside(ctx context.Context, g globalOptions, paths ...string) {
	var outside []string
	for _, p := range paths {
		if p != "" && !sessions.InsideProjects(g.ClaudeDir, filepath.Dir(p)) {
			outside = append(outside, absPath(p))
		}
	}
	if len(outside) == 0 {
		return
	}
	if err := recordRoots(ctx, g, outside...); err != nil {
		fmt.Fprintf(g.Stderr, "ccm: warning: %v: prune keeps what they reference only while they are there and ccm purge or restore runs on them again\n", err)
	}
}
