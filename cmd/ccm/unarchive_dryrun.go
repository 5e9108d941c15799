package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"ccm/internal/fsutil"
	"ccm/internal/ui"
	"ccm/sessions/archive"
)

// unarchiveDryRun verifies each archive whole, as a real run does before
// it writes a byte, and says what would come back and what is in the way:
// it writes nothing, takes no lock and finishes no interrupted run. A
// session a real run would refuse is a failed item here too, with the
// real run's words.
func unarchiveDryRun(ctx context.Context, o unarchiveOptions, where string, todo, here []*unarchiveItem) error {
	failed := newItemErrors(o.globalOptions)
	files := map[*unarchiveItem][]plannedFile{}
	for _, it := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		if it.Result == "failed" { // its download
			failed.add(errors.New(it.Error))
			continue
		}
		m, err := archive.Verify(it.file)
		if err != nil && o.AllowMissingContent && errors.Is(err, archive.ErrCorrupt) && !errors.Is(err, archive.ErrForeign) {
			// The real run reads what is intact and restores the session
			// without the damaged content; its sidecar lists the files.
			if side, serr := archive.ReadSidecar(archive.SidecarPath(it.file)); serr == nil {
				m, err = side, nil
				it.Warning = "its archive is damaged: what of its stored content is lost stays stubs"
			}
		}
		var pf []plannedFile
		if err == nil {
			pf, err = placeFiles(o, m)
		}
		if err != nil {
			it.Result, it.Error = "failed", err.Error()
			failed.add(err)
			continue
		}
		it.Result, it.Files, it.Project = "would restore", len(m.Files), m.Project
		files[it] = pf
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, map[string]any{"dry_run": true, "sessions": append(todo, here...), "failed": failed.count()}); err != nil {
			return err
		}
	} else {
		printUnarchiveHead(o, where, todo, here, failed.count())
		if o.Verbose {
			if err := printUnarchivePlan(o, todo, files); err != nil {
				return err
			}
		}
	}
	if failed.count() > 0 {
		if len(todo) == 1 {
			return silentError{code: exitError}
		}
		return silentError{code: exitFindings}
	}
	return nil
}

// plannedFile is one file of an archive and what a restore would do
// with it.
type plannedFile struct {
	Path   string // where it goes
	Action string // restore, in place (the same bytes are there), replace (--force keeps the other as a backup)
}

// placeFiles says where each file of m goes and whether another file is
// in its way, which a real run refuses without --force.
func placeFiles(o unarchiveOptions, m *archive.Manifest) ([]plannedFile, error) {
	var out []plannedFile
	for _, e := range m.Files {
		dest := filepath.Join(o.ClaudeDir, filepath.FromSlash(e.Path))
		fi, err := os.Lstat(dest)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, plannedFile{dest, "restore"})
			continue
		case err != nil:
			return nil, err
		case fi.Mode().IsRegular() && fi.Size() == e.Size && sameSHA256(dest, e.SHA256):
			out = append(out, plannedFile{dest, "in place"})
			continue
		case !o.Force:
			return nil, fmt.Errorf("%s %w", dest, archive.ErrTargetExists)
		}
		out = append(out, plannedFile{dest, "replace"})
	}
	return out, nil
}

// sameSHA256 reports whether the file at p hashes to sum (hex).
func sameSHA256(p, sum string) bool {
	f, err := fsutil.OpenRegular(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == sum
}

// printUnarchivePlan lists, after the summary, each session and the files
// it would put back.
func printUnarchivePlan(o unarchiveOptions, todo []*unarchiveItem, files map[*unarchiveItem][]plannedFile) error {
	t := ui.NewTable(ui.Col{}, ui.Col{Shrink: true, Min: 20}, ui.Col{Shrink: true, Min: 20})
	for _, it := range todo {
		if it.Result == "failed" {
			t.Add("failed", shortID(o.globalOptions, it.Session), it.Error)
			continue
		}
		t.Add("session", shortID(o.globalOptions, it.Session), shortHome(it.Project))
		if it.Warning != "" {
			t.Add("  warning", it.Warning)
		}
		for _, f := range files[it] {
			t.Add("  "+f.Action, shortHome(f.Path))
		}
	}
	return writeTable(o.globalOptions, t)
}
