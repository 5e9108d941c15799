package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
	"ccm/prune"
	"ccm/purge"
	"ccm/purge/restore"
	"ccm/sessions"
)

// restoreOptions are the inputs of ccm restore.
type restoreOptions struct {
	globalOptions
	Select     sessions.Selector
	FromBackup bool
	From       string
	DryRun     bool
	Verbose    bool
	Backup     purge.BackupMode
}

func newRestoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "put purged content back from the CCM store, or bring back a backup",
		ArgsUsage: "[FILE|DIR...]",
		Description: `ccm restore FILE puts the stored content of every stub in FILE back in
place, byte for byte (a purge with --keep-thinking --keep-progress followed
by a restore gives back the original file). Stubs whose content is missing
from the store are reported and left as stubs, each with why (a stub whose
content ccm prune --evict-referenced deleted says so, and when).

ccm restore --backup FILE brings back the state before the latest purge (the
newest FILE.backup.* a purge made, or the one named with --from) byte for
byte. The current file is backed up first, as FILE.backup.<stamp>-restore,
so nothing written since is lost; --backup without --from skips those.

Files named (FILE..., --current, --session) each get their report. Over
sessions a folder, --all, --project or a narrowing selector chose, restore
works as a batch purge does: it prints one summary line (files restored,
unchanged, skipped, failed; bytes; stubs), and -v adds each file's report
and each file skipped, with why. It skips the live sessions it found and,
with --backup, the sessions no purge changed (they have no backup); a file
that fails is reported and the others carry on. A selection that matches
no session prints the summary with nothing in it and exits 0.

` + selectorHelp + `

` + exitStatusHelp,
		Flags: append(selectorFlags(),
			&cli.BoolFlag{Name: "backup", Usage: "bring back a backup instead of expanding stubs"},
			&cli.StringFlag{Name: "from", Usage: "the backup to bring back (default: the newest a purge made)", TakesFile: true},
			dryRunFlag("what would be restored; nothing is written"),
			verboseFlag("after a batch's summary, each file's report and each file skipped; what still writes to the replaced file and how the system can tell"),
			&cli.StringFlag{Name: "keep", Value: string(purge.DefaultBackup), Usage: "how to keep the file being replaced: zstd, link, copy or none"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sel, err := selectorFrom(cmd, false)
			if err != nil {
				return err
			}
			o := restoreOptions{globalOptions: globals(cmd), FromBackup: cmd.Bool("backup"), Select: sel,
				From: cmd.String("from"), DryRun: cmd.Bool("dry-run"), Verbose: cmd.Bool("verbose"), Backup: purge.BackupMode(cmd.String("keep"))}
			switch o.Backup {
			case purge.BackupLink, purge.BackupCopy, purge.BackupZstd, purge.BackupNone:
			default:
				return usagef("--keep must be link, copy, zstd or none")
			}
			if o.From != "" && !o.FromBackup {
				return usagef("--from goes with --backup")
			}
			return runRestore(ctx, o)
		},
	}
}

// runRestore restores the selected transcripts: files named one by one
// each get their report, in turn (a file that fails is reported and the
// others carry on); anything else is a batch (runRestoreBatch). It exits
// 1 when a stub stays a stub or a file failed.
func runRestore(ctx context.Context, o restoreOptions) error {
	noteFallbacks(o.Stderr, o.Verbose)
	sel, err := selectSessions(ctx, o.globalOptions, o.Select, sessions.SelectOptions{})
	if err != nil {
		return err
	}
	batch := isBatch(sel)
	files := sel.Todo
	if o.From != "" && (batch || len(files) != 1) {
		return usagef("--from names the backup of one transcript: select exactly one (FILE, --current or --session ID)")
	}
	opt := restore.DefaultOptions()
	opt.DryRun = o.DryRun
	opt.Backup = o.Backup
	opt.LockDir = ccmHome(o.globalOptions) + "/locks"
	if !o.FromBackup && len(files) > 0 {
		st, err := ccm.Open(storeRoot(o.globalOptions))
		if err != nil {
			return err
		}
		opt.Store = st
	}
	if batch {
		return runRestoreBatch(ctx, o, sel, opt)
	}
	var reports []*restore.Report
	var evicted map[ccm.Key]prune.Eviction // read when a stub stays a stub
	findings := false
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep, err := restoreOne(ctx, o, f.Path, opt)
		switch {
		case errors.Is(err, restore.ErrNoBackup) && len(files) > 1:
			// Among several, a session no purge changed has nothing to
			// go back to: said, not a failure.
			if !o.JSON {
				printSkipped(o.Stdout, []skippedFile{{f.Path, noBackupWhy}})
			}
			continue
		case errors.Is(err, restore.ErrNoBackup):
			return err // the error names the file already
		}
		if err != nil {
			err = purgeError(f.Path, err)
			if len(files) == 1 {
				return err
			}
			fmt.Fprintf(o.Stderr, "ccm: %v\n", err)
			findings = true
			continue
		}
		findings = findings || len(rep.Missing) > 0
		explainEvicted(rep, storeRoot(o.globalOptions), &evicted)
		reports = append(reports, rep)
		if !o.JSON {
			printRestoreReport(o, rep)
		}
	}
	if !o.DryRun {
		noteRestored(ctx, o.globalOptions, reports)
	}
	if o.JSON {
		var v any = reports
		if len(files) == 1 && len(reports) == 1 {
			v = reports[0] // one file: one object, as before
		}
		if err := writeJSON(o.Stdout, v); err != nil {
			return err
		}
	}
	if findings {
		return silentError{code: exitFindings}
	}
	return nil
}

// noteRestored records the transcripts restored and the backups the
// restores made, for the store's reference index.
func noteRestored(ctx context.Context, g globalOptions, reports []*restore.Report) {
	var paths, backups []string
	for _, r := range reports {
		paths = append(paths, r.Path)
		if r.Backup != "" {
			backups = append(backups, r.Backup)
		}
	}
	noteTranscripts(ctx, g, paths...)
	recordOutside(ctx, g, backups...)
}

// explainEvicted says, for each stub whose content is not in the store
// because ccm prune --evict-referenced deleted it, when and by which rule.
// The eviction log is read once, at the first such stub.
func explainEvicted(rep *restore.Report, root string, evicted *map[ccm.Key]prune.Eviction) {
	for i, m := range rep.Missing {
		if !strings.Contains(m.Reason, ccm.ErrNotFound.Error()) {
			continue
		}
		if *evicted == nil {
			if *evicted, _ = prune.Evictions(root); *evicted == nil {
				*evicted = map[ccm.Key]prune.Eviction{}
			}
		}
		if e, ok := (*evicted)[m.Key]; ok {
			rep.Missing[i].Reason = fmt.Sprintf("its content was evicted by ccm prune --evict-referenced on %s (%s rule)",
				e.At.Local().Format("2006-01-02 15:04"), e.Rule)
		}
	}
}

func restoreOne(ctx context.Context, o restoreOptions, path string, opt restore.Options) (*restore.Report, error) {
	if o.FromBackup {
		return restore.FromBackup(ctx, path, o.From, opt)
	}
	return restore.File(ctx, path, opt)
}

// printRestoreReport prints what a restore did to one file: what came
// back, where the replaced file is kept, and every stub that stays a stub
// with why.
func printRestoreReport(o restoreOptions, rep *restore.Report) {
	verb := "restored"
	if rep.DryRun {
		verb = "would restore"
	}
	if o.FromBackup {
		fmt.Fprintf(o.Stdout, "%s %s from %s (%s -> %s)\n", verb, rep.Path, rep.From, ui.Bytes(rep.BytesBefore), ui.Bytes(rep.BytesAfter))
	} else {
		fmt.Fprintf(o.Stdout, "%s %d stubs in %s (%s -> %s)\n", verb, rep.Restored, rep.Path, ui.Bytes(rep.BytesBefore), ui.Bytes(rep.BytesAfter))
	}
	if rep.ByValue > 0 {
		fmt.Fprintf(o.Stdout, "  %d of them claude-context-manager's, restored by value (the text as Claude Code writes it, not byte for byte) on lines %s\n",
			rep.ByValue, joinInts(rep.ByValueLines))
	}
	if rep.Backup != "" {
		fmt.Fprintf(o.Stdout, "  the file as it was is kept as %s\n", rep.Backup)
	}
	printWriters(o.Stdout, rep.Holders, rep.Backup, o.Verbose)
	for _, m := range rep.Missing {
		// The store's errors name the key; the line names it already.
		why := strings.TrimPrefix(m.Reason, string(m.Key)+": ")
		fmt.Fprintf(o.Stdout, "  line %d: %s stays a stub: %s\n", m.Line, m.Key, why)
	}
}
