package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
	"ccm/internal/ui"
)

// ---- verify

type cacheVerifyOptions struct {
	globalOptions
	Keys []string
}

func newCacheVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check every stored blob against its key",
		ArgsUsage: "[KEY...]",
		Description: `Reads every blob of the store (or only the KEYs given): each frame of a pack
is checked against its CRC-32C and each content against its sha256 key, in
packs and in blob files alike. Prints one line per damaged blob:
  damaged  KEY  WHERE: REASON
(a truncated pack, a frame that fails its checksum or hash, an index line
pointing past a pack's end, a missing pack) and one line per pack index
line that cannot be used, then a summary. Counts no access.
Exit 1 when anything is damaged.

` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runCacheVerify(ctx, cacheVerifyOptions{globalOptions: globals(cmd), Keys: cmd.Args().Slice()})
		},
	}
}

func runCacheVerify(ctx context.Context, o cacheVerifyOptions) error {
	var keys []ccm.Key
	for _, a := range o.Keys {
		k, err := parseKeyArg(a)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	if keys != nil {
		for _, k := range keys {
			if _, err := st.Stat(k); err != nil {
				return err
			}
		}
	}
	rep, err := st.VerifyAll(ctx, keys, ui.DoneTotal(newProgress(o.Stderr).Progress(), "verifying the store"))
	if err != nil {
		return storeErrorHint(err)
	}
	if o.JSON {
		if rep.Damaged == nil {
			rep.Damaged = []ccm.Damage{}
		}
		err = writeJSON(o.Stdout, rep)
	} else {
		for _, d := range rep.Damaged {
			name := string(d.Key)
			if name == "" {
				name = "index"
			}
			fmt.Fprintf(o.Stdout, "damaged  %s  %s\n", name, d.Reason)
		}
		_, err = fmt.Fprintf(o.Stdout, "verified %s blobs (%s): %s damaged\n", ui.Count(rep.Blobs), ui.Bytes(rep.Bytes), ui.Count(len(rep.Damaged)))
	}
	if err != nil {
		return err
	}
	if len(rep.Damaged) > 0 {
		return errFindings
	}
	return nil
}
