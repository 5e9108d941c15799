package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/restore"
	"ccm/purge"
)

// restoreOptions are the inputs of ccm restore.
type restoreOptions struct {
	globalOptions
	File       string
	FromBackup bool
	From       string
	DryRun     bool
	Backup     purge.BackupMode
}

func newRestoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "put purged content back from the CCM store, or bring back a backup",
		ArgsUsage: "FILE",
		Description: `ccm restore FILE puts the stored content of every stub in FILE back in
place, byte for byte (a purge with --keep-thinking --keep-progress followed
by a restore gives back the original file). Stubs whose content is missing
from the store are reported and left as stubs.

ccm restore --backup FILE brings back the state before the latest purge (the
newest FILE.backup.* a purge made, or the one named with --from) byte for
byte. The current file is backed up first, as FILE.backup.<stamp>-restore,
so nothing written since is lost; --backup without --from skips those.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "backup", Usage: "bring back a backup instead of expanding stubs"},
			&cli.StringFlag{Name: "from", Usage: "the backup to bring back (default: the newest a purge made)", TakesFile: true},
			&cli.BoolFlag{Name: "dry-run", Usage: "report what would be restored; write nothing"},
			&cli.StringFlag{Name: "keep", Value: "link", Usage: "how to keep the file being replaced: link, copy, zstd or none"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("give exactly one transcript to restore")
			}
			o := restoreOptions{globalOptions: globals(cmd), File: cmd.Args().First(), FromBackup: cmd.Bool("backup"),
				From: cmd.String("from"), DryRun: cmd.Bool("dry-run"), Backup: purge.BackupMode(cmd.String("keep"))}
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

func runRestore(ctx context.Context, o restoreOptions) error {
	opt := restore.DefaultOptions()
	opt.DryRun = o.DryRun
	opt.Backup = o.Backup
	opt.LockDir = ccmHome(o.globalOptions) + "/locks"
	var rep *restore.Report
	var err error
	if o.FromBackup {
		rep, err = restore.FromBackup(ctx, o.File, o.From, opt)
	} else {
		st, serr := ccm.Open(storeRoot(o.globalOptions))
		if serr != nil {
			return serr
		}
		opt.Store = st
		rep, err = restore.File(ctx, o.File, opt)
	}
	if err != nil {
		return purgeError(o.File, err)
	}
	if o.JSON {
		if err := writeJSON(o.Stdout, rep); err != nil {
			return err
		}
		if len(rep.Missing) > 0 {
			return silentError{code: exitFindings}
		}
		return nil
	}
	verb := "restored"
	if rep.DryRun {
		verb = "would restore"
	}
	if o.FromBackup {
		fmt.Fprintf(o.Stdout, "%s %s from %s (%s -> %s)\n", verb, rep.Path, rep.From, humanBytes(rep.BytesBefore), humanBytes(rep.BytesAfter))
	} else {
		fmt.Fprintf(o.Stdout, "%s %d stubs in %s (%s -> %s)\n", verb, rep.Restored, rep.Path, humanBytes(rep.BytesBefore), humanBytes(rep.BytesAfter))
	}
	if rep.ByValue > 0 {
		fmt.Fprintf(o.Stdout, "  %d of them the Python tool's, restored by value (the text as Claude Code writes it, not byte for byte) on lines %s\n",
			rep.ByValue, joinInts(rep.ByValueLines))
	}
	if rep.Backup != "" {
		fmt.Fprintf(o.Stdout, "  the file as it was is kept as %s\n", rep.Backup)
	}
	printWriters(o.Stdout, rep.Holders, rep.Backup, false)
	for _, m := range rep.Missing {
		// The store's errors name the key; the line names it already.
		why := strings.TrimPrefix(m.Reason, string(m.Key)+": ")
		fmt.Fprintf(o.Stdout, "  line %d: %s stays a stub: %s\n", m.Line, m.Key, why)
	}
	if len(rep.Missing) > 0 {
		return silentError{code: exitFindings}
	}
	return nil
}
